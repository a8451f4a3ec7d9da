/**
 * Node's test environment, with each module compiled once per worker (compile-once.js): the
 * environment of `npm test` (jest.config.js picks it).
 */
'use strict';

require('./compile-once').install();

const { TestEnvironment } = require('jest-environment-node');

module.exports = TestEnvironment;
