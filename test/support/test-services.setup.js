/** Jest's globalSetup: the PostgreSQL and Redis of the run (see test-services.js). */
'use strict';

const { setUpServices } = require('./test-services');

/** With Jest's worker count, for a Redis per worker. */
module.exports = (globalConfig) => setUpServices({ workers: globalConfig.maxWorkers });
