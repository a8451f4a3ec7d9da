/**
 * Jest's own runner, always in band: the runner of the `e2e-serial` project (the suites listed in
 * `SERIAL_E2E` of jest.config.js). Jest runs one runner's suites after another's, so these run one
 * at a time in Jest's own process once the parallel workers are done, and their handles stay
 * visible to open-handles-reporter.js.
 */
const TestRunner = require('jest-runner').default;

class SerialRunner extends TestRunner {
  isSerial = true;
}

module.exports = SerialRunner;
