import * as vm from 'node:vm';

type ModuleState = typeof import('../fixtures/compile-once/module-state');

/** Loads the fixture in a module registry of its own, as a suite of its own would. */
function freshLoad(): ModuleState {
  let loaded!: ModuleState;
  jest.isolateModules(() => {
    loaded = jest.requireActual<ModuleState>('../fixtures/compile-once/module-state');
  });
  return loaded;
}

/**
 * The test environments compile each module once per Jest worker and run the compiled script in
 * every suite's context (test/support/compile-once.js): what a suite sees must not change.
 */
describe('modules compiled once per worker', () => {
  it('is on in this environment, unless MCP_TEST_COMPILE_EACH=1', () => {
    const installed = (vm.compileFunction as unknown as Record<symbol, unknown>)[
      Symbol.for('durable-mcp.test.compile-once')
    ];
    expect(installed).toBe(process.env.MCP_TEST_COMPILE_EACH === '1' ? undefined : true);
  });

  it('gives every module registry its own instance of a module, with its own state', () => {
    const first = freshLoad();
    const second = freshLoad();
    expect(first).not.toBe(second);
    expect(first.next).not.toBe(second.next);
    expect([first.next(), first.next(), first.next()]).toEqual([1, 2, 3]);
    expect(second.next()).toBe(1);
  });

  it("keeps the module's own line and column numbers in stack traces, on every load", () => {
    for (const loaded of [freshLoad(), freshLoad(), freshLoad()]) {
      const error = (() => {
        try {
          loaded.fail();
        } catch (thrown) {
          return thrown as Error;
        }
      })();
      expect(error?.stack).toMatch(/module-state\.ts:11:9\)/);
    }
  });
});
