/**
 * The Node test environment plus a check, for `LEAK_CHECK=1 npm test` (jest.config.js picks it):
 * after each suite's own teardown and a short grace period, the handles (sockets, servers, child
 * processes) that the suite opened and left open are printed with the suite's path. It names the
 * suite behind the open-handles reporter's end-of-run list; it fails nothing. Modules are compiled
 * once per worker (compile-once.js), as in the plain environment.
 */
require('./compile-once').install();
const { TestEnvironment } = require('jest-environment-node');
const { describeHandle } = require('./open-handles-reporter');

const GRACE_MS = Number(process.env.LEAK_CHECK_GRACE_MS || 1500);

class LeakCheckEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = context.testPath;
  }

  async setup() {
    await super.setup();
    this.before = new Set(process._getActiveHandles());
  }

  async teardown() {
    await new Promise((resolve) => setTimeout(resolve, GRACE_MS));
    const left = process
      ._getActiveHandles()
      .filter((handle) => !this.before.has(handle))
      .map(describeHandle)
      .filter(Boolean);
    if (left.length)
      process.stderr.write(
        `\nleak check: ${this.testPath} left open:\n${left.map((line) => `  - ${line}\n`).join('')}`,
      );
    await super.teardown();
  }
}

module.exports = LeakCheckEnvironment;
