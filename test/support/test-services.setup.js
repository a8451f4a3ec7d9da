/**
 * Jest's globalSetup, its parts side by side: the PostgreSQL and Redis of the run (see
 * test-services.js); the disk cache of the TypeScript the suites' child processes run, filled
 * before the first child starts (ts-cache.js); and, with `MCP_TEST_COVERAGE=1`, the library
 * compiled and instrumented once before the workers start (worker-coverage/warm-instrumented-cache.js).
 */
'use strict';

const { setUpServices } = require('./test-services');
const { warmTranspileCache } = require('./ts-cache');

/** With Jest's worker count, for a Redis per worker. */
module.exports = async (globalConfig) => {
  const services = setUpServices({ workers: globalConfig.maxWorkers });
  const instrumenting =
    process.env.MCP_TEST_COVERAGE === '1'
      ? require('./worker-coverage/warm-instrumented-cache').warmInstrumentedCache({
          rootDir: globalConfig.rootDir,
          swcOptions: require('./swc-options'),
        })
      : undefined;
  // On this thread while the instrumenting threads run: about a second of CPU from an empty cache.
  warmTranspileCache(globalConfig.rootDir);
  await Promise.all([services, instrumenting]);
};
