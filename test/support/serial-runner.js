/**
 * Jest's own runner, always in band: the e2e project's runner. With `--maxWorkers=2` the unit
 * specs run in two worker processes while the end-to-end suites still run one after the other in
 * Jest's own process, as they must (they share ports, Redis, PostgreSQL and count processes), and
 * their handles stay visible to open-handles-reporter.js. Jest runs the projects' runners one
 * after the other, so unit specs and e2e suites never overlap, and one run measures the coverage
 * of both.
 */
const TestRunner = require('jest-runner').default;

class SerialRunner extends TestRunner {
  isSerial = true;
}

module.exports = SerialRunner;
