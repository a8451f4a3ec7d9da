#!/usr/bin/env node
// The static checks of `npm test`, beside Jest: the npm scripts below, in two lanes side by side.
// The type check and ESLint (one process over one TypeScript program, scripts/typecheck-and-lint.js,
// the longest check by far) run alone in one lane; the other checks run one after another in the
// second lane, so that two cores each run one check at a time. Every check runs, whatever another
// one answers. Each check's output is kept and printed in one piece when it ends, under a line with
// its name, exit code and time; the script exits 1 when any check failed (after all ended), and
// lists the failed ones last.
//
//   node scripts/run-checks.js            all checks
//   node scripts/run-checks.js --serial   the same checks, one at a time (one lane)
'use strict';

const { spawn } = require('node:child_process');

const LANES = [['typecheck-and-lint'], ['lint:deps', 'lint:names', 'options:check', 'format:check']];

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * The checks write to pipes, not to the terminal: on a terminal they are told to keep their colors
 * (unless NO_COLOR or FORCE_COLOR says otherwise); in a log they write plain text as before.
 */
const colorEnv =
  process.stdout.isTTY && !('NO_COLOR' in process.env) && !('FORCE_COLOR' in process.env)
    ? { ...process.env, FORCE_COLOR: '1' }
    : process.env;

/** Runs one npm script, its stdout and stderr kept together in the order they came. */
function run(script) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', '--silent', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: process.platform === 'win32',
      env: colorEnv,
    });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    const done = (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const output = Buffer.concat(chunks).toString();
      process.stdout.write(`=== ${script}: ${code === 0 ? 'ok' : `failed (exit ${code})`}, ${seconds} s\n`);
      if (output) process.stdout.write(output.endsWith('\n') ? output : `${output}\n`);
      resolve({ script, code });
    };
    child.on('error', (error) => {
      chunks.push(Buffer.from(`${error.stack ?? String(error)}\n`));
      done(1);
    });
    child.on('close', (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
}

async function lane(scripts) {
  const results = [];
  for (const script of scripts) results.push(await run(script));
  return results;
}

async function main() {
  const lanes = process.argv.includes('--serial') ? [LANES.flat()] : LANES;
  const results = (await Promise.all(lanes.map(lane))).flat();
  const failed = results.filter((result) => result.code !== 0);
  if (failed.length > 0) {
    process.stdout.write(`=== failed checks: ${failed.map((result) => result.script).join(', ')}\n`);
    process.exitCode = 1;
  }
}

void main();
