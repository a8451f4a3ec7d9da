#!/usr/bin/env node
// `npm test`: the static checks (scripts/run-checks.js) and Jest side by side. Jest's output comes
// as it runs; the checks' output is kept and printed after Jest's, so it does not break into Jest's
// progress lines. The checks run at a lower CPU priority (nice 10): Jest's suites spend much of
// their time waiting on PostgreSQL, Redis and child processes, and the checks use the CPU those
// waits leave free instead of delaying the suites. The run fails when either fails; the last lines
// say which. Arguments go to Jest (`npm test -- test/e2e/sse-streams.e2e-spec.ts`, `--coverage`).
//
//   npm test                       checks and Jest side by side
//   npm run checks                 the checks alone
//   npx jest --maxWorkers=3 ...    Jest alone
'use strict';

const { spawn } = require('node:child_process');
const { setPriority } = require('node:os');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const CHECKS_PRIORITY = 10;

const children = [];

/** Runs a command; resolves with its exit code (1 for a signal or a failure to start). */

function run(command, args, options, started) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, ...options });
    children.push(child);
    started?.(child);
    child.on('error', (error) => {
      process.stderr.write(`${command}: ${error.message}\n`);
      resolve(1);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

async function main() {
  const checksOutput = [];
  const checks = run(
    process.execPath,
    [join(ROOT, 'scripts', 'run-checks.js')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
    (child) => {
      try {
        setPriority(child.pid, CHECKS_PRIORITY);
      } catch {
        // Not permitted here: the checks run at the normal priority.
      }
      child.stdout.on('data', (chunk) => checksOutput.push(chunk));
      child.stderr.on('data', (chunk) => checksOutput.push(chunk));
    },
  );
  const jest = run(process.execPath, [require.resolve('jest/bin/jest'), '--maxWorkers=3', ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  // An interrupted run stops both.
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.once(signal, () => {
      for (const child of children) child.kill(signal);
      process.exitCode = 130;
    });

  const jestCode = await jest;
  const checksCode = await checks;
  process.stdout.write(`\n=== the static checks (npm run checks)\n${Buffer.concat(checksOutput).toString()}`);
  const failed = [...(checksCode !== 0 ? ['the static checks (above)'] : []), ...(jestCode !== 0 ? ['Jest'] : [])];
  if (failed.length > 0) {
    process.stdout.write(`=== npm test failed: ${failed.join(', ')}\n`);
    process.exitCode = 1;
  }
}

void main();
