/** Node's test environment (../node.environment.js) with coverage collected per worker (coverage.environment.js). */
'use strict';

const NodeEnvironment = require('../node.environment');
const { withWorkerCoverage } = require('./coverage.environment');

module.exports = withWorkerCoverage(NodeEnvironment);
