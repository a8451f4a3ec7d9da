import type { HttpAdapterHost } from '@nestjs/core';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { LazyAbort } from '../pipeline/lazy-abort';
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

  it('lists the mounts that registered or had a request', () => {
    const service = new McpDrainService();
    service.register('a', 1000, 0);
    service.enter('b').leave();
    expect(service.mountNames()).toEqual(['a', 'b']);
  });

  it('ends at the deadline without aborting anything when refusals never stop and nothing is in flight', async () => {
    jest.useFakeTimers();
    const service = new McpDrainService();
    service.register('m', 1000, 500);
    let done = false;
    void service.drain().then(() => (done = true));
    for (let t = 0; t < 900; t += 300) {
      service.refused();
      await jest.advanceTimersByTimeAsync(300);
    }
    expect(done).toBe(false);
    service.refused();
    await jest.advanceTimersByTimeAsync(100);
    expect(done).toBe(true);
    expect(service.status().inFlight).toBe(0);
  });

  it('waits for a request that arrives during the quiet period, then for the quiet period again', async () => {
    jest.useFakeTimers();
    const service = new McpDrainService();
    service.register('m', 10_000, 500);
    const first = service.enter('m');
    let done = false;
    void service.drain().then(() => (done = true));
    first.leave();
    await jest.advanceTimersByTimeAsync(100);
    const late = service.enter('m');
    await jest.advanceTimersByTimeAsync(2000);
    expect(done).toBe(false);
    expect(late.signal.aborted).toBe(false);
    late.leave();
    await jest.advanceTimersByTimeAsync(499);
    expect(done).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
    expect(late.signal.aborted).toBe(false);
  });

  it('aborts a request that arrived during the quiet period and runs past the deadline', async () => {
    jest.useFakeTimers();
    const service = new McpDrainService();
    service.register('m', 1000, 500);
    service.enter('m').leave();
    service.refused();
    let done = false;
    void service.drain().then(() => (done = true));
    await jest.advanceTimersByTimeAsync(100);
    const late = service.enter('m');
    late.signal.addEventListener('abort', () => late.leave());
    await jest.advanceTimersByTimeAsync(899);
    expect(late.signal.aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(late.signal.aborted).toBe(true);
    await jest.advanceTimersByTimeAsync(0);
    expect(done).toBe(true);
  });

  it('gives up after the grace twice when a forced request still does not leave, and reports it in flight', async () => {
    jest.useFakeTimers();
    const service = new McpDrainService();
    service.register('m', 1000, 0);
    const stuck = service.enter('m');
    let forced = false;
    void stuck.forced.then(() => (forced = true));
    let done = false;
    void service.drain().then(() => (done = true));
    await jest.advanceTimersByTimeAsync(1000 + DRAIN_ABORT_GRACE_MS);
    expect(stuck.signal.aborted).toBe(true);
    expect(forced).toBe(true);
    expect(done).toBe(false);
    await jest.advanceTimersByTimeAsync(DRAIN_ABORT_GRACE_MS);
    expect(done).toBe(true);
    expect(service.status()).toMatchObject({ draining: true, inFlight: 1 });
  });

  it("aborts the request's own abort source at the deadline and says the deadline fired", async () => {
    jest.useFakeTimers();
    const service = new McpDrainService();
    service.register('m', 1000, 0);
    const source = new LazyAbort();
    const request = service.enter('m', source);
    const quick = service.enter('m');
    quick.leave();
    let answered = 0;
    request.whenForced(() => answered++);
    void service.drain();
    await jest.advanceTimersByTimeAsync(999);
    expect(request.deadlineFired).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(request.deadlineFired).toBe(true);
    expect(request.abort).toBe(source);
    expect((source.reason as Error).message).toContain('drain deadline');
    expect(request.signal).toBe(source.signal);
    expect(quick.deadlineFired).toBe(false);
    expect(quick.abort.aborted).toBe(false);
    await jest.advanceTimersByTimeAsync(DRAIN_ABORT_GRACE_MS);
    expect(answered).toBe(1);
    // Asked for after the force: both settle at once.
    request.whenForced(() => answered++);
    expect(answered).toBe(2);
    await expect(request.forced).resolves.toBeUndefined();
    request.leave();
  });

  it('holds its last refusals until callers stopped connecting, closes the listener, then lets them out', async () => {
    const server = createServer((_req, res) => res.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const adapter = { getHttpServer: () => server, close: () => new Promise((resolve) => server.close(resolve)) };
    const service = new McpDrainService({ httpAdapter: adapter } as unknown as HttpAdapterHost);
    service.register('m', 300, 200);
    service.onApplicationBootstrap();
    const drained = service.drain();

    // A caller that connects again as soon as it is refused, bounded in count: the drain's
    // refusals never stop, so it runs to its deadline, then holds the refusal the caller waits on.
    // The caller goes on until a refusal reaches it with the listener closed, even when the drain
    // settled while it was connecting (a busy machine can stall it for longer than the quiet period).
    const listeningAtRelease: boolean[] = [];
    for (let n = 0; n < 10_000; n++) {
      service.refused();
      await service.beforeRefusing();
      listeningAtRelease.push(server.listening);
      if (!server.listening) break;
      const socket = connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve).once('error', resolve));
      socket.destroy();
    }
    await drained;
    expect(server.listening).toBe(false);
    expect(listeningAtRelease.at(-1)).toBe(false);
    expect(listeningAtRelease.slice(0, -1).every(Boolean)).toBe(true);
    expect(service.status().draining).toBe(true);
  });
});
