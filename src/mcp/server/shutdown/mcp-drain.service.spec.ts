import { DRAIN_ABORT_GRACE_MS, McpDrainService } from './mcp-drain.service';

describe('McpDrainService', () => {
  afterEach(() => jest.useRealTimers());

  it('is not draining until the shutdown, then reports the requests it waits for', async () => {
    const service = new McpDrainService();
    service.register('m', 1000, 0);
    expect(service.status()).toEqual({ draining: false, since: null, inFlight: 0 });
    const request = service.enter('m');
    expect(service.status().inFlight).toBe(1);
    const drained = service.onModuleDestroy();
    expect(service.draining).toBe(true);
    expect(service.drain()).toBe(drained);
    request.leave();
    request.leave();
    await drained;
    expect(request.signal.aborted).toBe(false);
    expect(service.status()).toMatchObject({ draining: true, inFlight: 0 });
  });

  it('closes at once when nothing is in flight and nothing was refused, whatever the quiet period', async () => {
    jest.useFakeTimers();
    const service = new McpDrainService();
    service.register('m', 10_000, 60_000);
    service.enter('m').leave();
    let done = false;
    void service.drain().then(() => (done = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(done).toBe(true);
  });

  it('waits for a quiet period after the last refusal before it ends', async () => {
    jest.useFakeTimers();
    const service = new McpDrainService();
    service.register('m', 10_000, 500);
    let done = false;
    void service.drain().then(() => (done = true));
    service.refused();
    await jest.advanceTimersByTimeAsync(400);
    service.refused();
    await jest.advanceTimersByTimeAsync(400);
    expect(done).toBe(false);
    await jest.advanceTimersByTimeAsync(200);
    expect(done).toBe(true);
  });

  it('aborts what still runs at the deadline, then forces an answer for what ignores its signal', async () => {
    jest.useFakeTimers();
    const service = new McpDrainService();
    service.register('m', 1000, 0);
    const polite = service.enter('m');
    const stubborn = service.enter('m');
    polite.signal.addEventListener('abort', () => polite.leave());
    let forced = false;
    void stubborn.forced.then(() => (forced = true));
    let done = false;
    void service.drain().then(() => (done = true));
    await jest.advanceTimersByTimeAsync(999);
    expect(polite.signal.aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(polite.signal.aborted).toBe(true);
    expect((stubborn.signal.reason as Error).message).toContain('drain deadline');
    expect(service.status().inFlight).toBe(1);
    await jest.advanceTimersByTimeAsync(DRAIN_ABORT_GRACE_MS);
    expect(forced).toBe(true);
    expect(done).toBe(false);
    stubborn.leave();
    await jest.advanceTimersByTimeAsync(0);
    expect(done).toBe(true);
  });
});
