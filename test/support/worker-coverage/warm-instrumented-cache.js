/**
 * Before the workers of `MCP_TEST_COVERAGE=1 npm test` start, every library file is compiled and
 * instrumented once, in threads side by side, into the cache of instrumented files (see
 * `instrument` in raw-coverage.js).
 *
 * Without it, a run that starts with empty caches instrumented each file several times over: the
 * first suite of every worker loads the library at the same moment, before any worker has written
 * its output, and Jest's transform cache is kept per project (unit, e2e, e2e-serial), so each
 * project compiled the library again. Istanbul's instrumentation costs about 25 ms of CPU a file,
 * about 10 s for the library, so those extra passes cost the run a minute of CPU or more. Warming
 * the cache costs one pass; the workers then read what it wrote. A file the warm-up did not compile
 * the way a worker does (other options, an edited file) is simply instrumented by the worker, as
 * before: the cache finds entries by content.
 */
'use strict';

const { readFileSync } = require('node:fs');
const { availableParallelism } = require('node:os');
const { Worker, isMainThread, workerData } = require('node:worker_threads');

/** Compiles and instruments `files` as a Jest worker's transformer would (instrumenting-transformer.js). */
function warmFiles({ files, rootDir, swcOptions }) {
  const swc = require('@swc/jest').createTransformer(swcOptions);
  const { instrument } = require('./raw-coverage');
  // What Jest's module system passes for a CommonJS module: the option @swc/jest reads.
  const jestOptions = { config: { rootDir }, supportsStaticESM: false, instrument: false };
  for (const file of files) instrument(swc.process(readFileSync(file, 'utf8'), file, jestOptions), file, rootDir);
}

/**
 * Warms the cache for the library under `rootDir` (src/mcp), compiled with `swcOptions`, in up to
 * `threads` threads. Resolves when every file is in the cache; a thread that fails only leaves its
 * files to the workers, and its error is printed.
 */
async function warmInstrumentedCache({ rootDir, swcOptions, threads = Math.min(4, availableParallelism()) }) {
  const files = require('./raw-coverage').coveredFiles(rootDir);
  const parts = Array.from({ length: Math.max(1, threads) }, (_, index) =>
    files.filter((_file, position) => position % Math.max(1, threads) === index),
  ).filter((part) => part.length > 0);
  await Promise.all(
    parts.map(
      (part) =>
        new Promise((resolve) => {
          const worker = new Worker(__filename, { workerData: { files: part, rootDir, swcOptions } });
          worker.once('error', (error) => {
            process.stderr.write(`warming the instrumented files' cache: ${error?.stack ?? error}\n`);
            resolve();
          });
          worker.once('exit', () => resolve());
        }),
    ),
  );
}

if (!isMainThread && workerData?.files) warmFiles(workerData);

module.exports = { warmInstrumentedCache };
