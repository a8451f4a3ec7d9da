/** The leak check's environment (LEAK_CHECK=1) with coverage collected per worker (coverage.environment.js). */
'use strict';

const LeakCheckEnvironment = require('../leak-check.environment');
const { withWorkerCoverage } = require('./coverage.environment');

module.exports = withWorkerCoverage(LeakCheckEnvironment);
