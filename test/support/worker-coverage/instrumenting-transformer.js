/**
 * The Jest transformer of `MCP_TEST_COVERAGE=1 npm test`: TypeScript through `@swc/jest` as always,
 * then, for the library's own files (see `coveredFile` in raw-coverage.js), the same Istanbul
 * instrumentation Jest's `--coverage` applies (babel-plugin-istanbul over SWC's output, its source
 * map carried along so that the report maps back to the TypeScript). The counters are collected by
 * coverage.environment.js and reported by coverage-reporter.js: see raw-coverage.js for why Jest's
 * own collection is not used.
 */
'use strict';

const { createHash } = require('node:crypto');
const swcJest = require('@swc/jest');
const { instrument } = require('./raw-coverage');

module.exports = {
  /** `options`: the `@swc/jest` options of the project (jest.config.js). */
  createTransformer(options) {
    const swc = swcJest.createTransformer(options);
    return {
      process(source, filename, jestOptions) {
        return instrument(swc.process(source, filename, jestOptions), filename, jestOptions.config.rootDir);
      },
      getCacheKey(source, filename, ...rest) {
        return createHash('sha1')
          .update(swc.getCacheKey(source, filename, ...rest))
          .update('\0istanbul-v1')
          .digest('hex');
      },
    };
  },
};
