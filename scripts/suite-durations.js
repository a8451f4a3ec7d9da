#!/usr/bin/env node
// Writes test/support/suite-durations.json, the durations by which `npm test` runs the longest
// suites first (test/support/duration-sequencer.js), from the `--json` output of a whole run:
//
//   npm test -- --coverage --json --outputFile=/tmp/jest.json
//   node scripts/suite-durations.js /tmp/jest.json
//
// Measure a whole run as CI runs it (all suites side by side, with coverage): a suite's time
// beside the others is what the order has to balance. Prints the ten longest suites.
'use strict';

const { readFileSync, writeFileSync } = require('node:fs');
const { join, relative, sep } = require('node:path');

const ROOT = join(__dirname, '..');
const OUTPUT = join(ROOT, 'test', 'support', 'suite-durations.json');

const input = process.argv[2];
if (!input) {
  console.error('usage: node scripts/suite-durations.js <jest --json output>');
  process.exit(2);
}

const results = JSON.parse(readFileSync(input, 'utf8')).testResults;
const suites = results
  .filter((result) => result.startTime && result.endTime && result.status !== 'pending')
  .map((result) => [
    relative(ROOT, result.name).split(sep).join('/'),
    Math.round((result.endTime - result.startTime) / 100) / 10,
  ])
  .sort(([pathA, a], [pathB, b]) => b - a || (pathA < pathB ? -1 : 1));

const file = {
  about:
    'Seconds per suite in a whole `npm test -- --coverage` run, longest first: the order test/support/duration-sequencer.js runs them in. Rewrite with scripts/suite-durations.js.',
  suites: Object.fromEntries(suites),
};
writeFileSync(OUTPUT, `${JSON.stringify(file, null, 2)}\n`);
console.log(`${relative(ROOT, OUTPUT)}: ${suites.length} suites`);
for (const [path, seconds] of suites.slice(0, 10)) console.log(`${String(seconds).padStart(7)} s  ${path}`);
