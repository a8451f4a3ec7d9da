/**
 * Jest's globalSetup: the PostgreSQL and Redis of the run (see test-services.js) and, with
 * `MCP_TEST_COVERAGE=1`, the library compiled and instrumented once before the workers start
 * (see worker-coverage/warm-instrumented-cache.js), side by side.
 */
'use strict';

const { setUpServices } = require('./test-services');

/** With Jest's worker count, for a Redis per worker. */
module.exports = async (globalConfig) => {
  const warming =
    process.env.MCP_TEST_COVERAGE === '1'
      ? require('./worker-coverage/warm-instrumented-cache').warmInstrumentedCache({
          rootDir: globalConfig.rootDir,
          swcOptions: require('./swc-options'),
        })
      : undefined;
  await Promise.all([setUpServices({ workers: globalConfig.maxWorkers }), warming]);
};
