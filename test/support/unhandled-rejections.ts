/**
 * Fails a suite on any unhandled promise rejection while it runs: a promise of the module that
 * rejects with nobody listening would crash a host running with --unhandled-rejections=throw.
 * test/support/no-unhandled-rejections.setup.ts installs it for every e2e and fault suite.
 */
export function failOnUnhandledRejections(): { seen: unknown[] } {
  const state = { seen: [] as unknown[] };
  const listener = (reason: unknown) => state.seen.push(reason);
  beforeAll(() => {
    process.on('unhandledRejection', listener);
  });
  afterAll(async () => {
    // Rejections are reported after the microtask queue drains: give the loop two turns.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', listener);
    expect(
      state.seen.map((reason) => (reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason))),
    ).toEqual([]);
  });
  return state;
}
