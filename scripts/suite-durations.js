#!/usr/bin/env node
// Writes test/support/suite-durations.json, the durations by which `npm test` runs the longest
// suites first (test/support/duration-sequencer.js), from the `--json` output of whole runs:
//
//   MCP_TEST_COVERAGE=1 npm test -- --json --outputFile=/tmp/jest.json
//   node scripts/suite-durations.js /tmp/jest.json [/tmp/jest-2.json ...]
//
// Measure whole runs as CI runs them (all suites side by side, with coverage): a suite's time
// beside the others is what the order has to balance. With several runs, a suite's duration is
// its mean over the runs it ran in. Prints the ten longest suites.
'use strict';

const { readFileSync, writeFileSync } = require('node:fs');
const { join, relative, sep } = require('node:path');

const ROOT = join(__dirname, '..');
const OUTPUT = join(ROOT, 'test', 'support', 'suite-durations.json');

const inputs = process.argv.slice(2);
if (inputs.length === 0) {
  console.error('usage: node scripts/suite-durations.js <jest --json output>...');
  process.exit(2);
}

/** Seconds per suite path, one entry per run the suite ran in. */
const measured = new Map();
for (const input of inputs) {
  for (const result of JSON.parse(readFileSync(input, 'utf8')).testResults) {
    if (!result.startTime || !result.endTime || result.status === 'pending') continue;
    const path = relative(ROOT, result.name).split(sep).join('/');
    if (!measured.has(path)) measured.set(path, []);
    measured.get(path).push((result.endTime - result.startTime) / 1000);
  }
}
const suites = [...measured]
  .map(([path, seconds]) => [path, Math.round((seconds.reduce((a, b) => a + b, 0) / seconds.length) * 10) / 10])
  .sort(([pathA, a], [pathB, b]) => b - a || (pathA < pathB ? -1 : 1));

const file = {
  about:
    'Seconds per suite in whole `MCP_TEST_COVERAGE=1 npm test` runs (the mean over the runs measured), longest first: the order test/support/duration-sequencer.js runs them in. Rewrite with scripts/suite-durations.js.',
  suites: Object.fromEntries(suites),
};
writeFileSync(OUTPUT, `${JSON.stringify(file, null, 2)}\n`);
console.log(`${relative(ROOT, OUTPUT)}: ${suites.length} suites`);
for (const [path, seconds] of suites.slice(0, 10)) console.log(`${String(seconds).padStart(7)} s  ${path}`);
