/**
 * The test environment of `MCP_TEST_COVERAGE=1 npm test` (jest.config.js picks it): the environment
 * it wraps (Node's, or the leak check's), plus, when a suite's tests are over, its coverage counters
 * added into the worker's running totals (raw-coverage.js) and taken off the suite's global, so
 * Jest does not copy them. The environments it wraps compile each module once per worker
 * (../compile-once.js), as without coverage.
 */
'use strict';

const { RAW_DIR_VARIABLE, RawCoverage } = require('./raw-coverage');

let totals;

/** The environment class `Base` with coverage collected per worker. */
function withWorkerCoverage(Base) {
  return class WorkerCoverageEnvironment extends Base {
    async handleTestEvent(event, state) {
      if (super.handleTestEvent) await super.handleTestEvent(event, state);
      if (event.name === 'teardown') this.harvest();
    }

    async teardown() {
      this.harvest();
      await super.teardown();
    }

    harvest() {
      const coverage = this.global?.__coverage__;
      if (!coverage) return;
      this.global.__coverage__ = undefined;
      totals ??= new RawCoverage(process.env[RAW_DIR_VARIABLE]);
      totals.add(coverage);
      totals.write();
    }
  };
}

module.exports = { withWorkerCoverage };
