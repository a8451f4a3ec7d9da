/** Node's test environment with coverage collected per worker (coverage.environment.js). */
'use strict';

const { TestEnvironment } = require('jest-environment-node');
const { withWorkerCoverage } = require('./coverage.environment');

module.exports = withWorkerCoverage(TestEnvironment);
