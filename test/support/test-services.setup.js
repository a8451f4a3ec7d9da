/** Jest's globalSetup: the PostgreSQL and Redis of the run (see test-services.js). */
'use strict';

const { setUpServices } = require('./test-services');

module.exports = () => setUpServices();
