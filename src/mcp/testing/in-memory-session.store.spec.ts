import { InMemoryMcpSessionStore } from './in-memory-session.store';

const alice = { key: 'alice', label: 'Alice', raw: 'alice' };
const bob = { key: 'bob', label: 'Bob', raw: 'bob' };
const opening = { principal: alice, protocolVersion: '2025-11-25', clientInfo: { name: 'c' }, clientCapabilities: {} };

describe('InMemoryMcpSessionStore', () => {
  afterEach(() => jest.useRealTimers());

  it('opens sessions bound to its mount and the principal, with a transport-safe random id', async () => {
    const store = new InMemoryMcpSessionStore({ mount: 'm1' });
    const session = await store.open(opening);
    expect(session).toMatchObject({
      mount: 'm1',
      principalKey: 'alice',
      principalLabel: 'Alice',
      protocolVersion: '2025-11-25',
      logLevel: null,
      terminatedAt: null,
    });
    expect(session.sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await store.open(opening)).sessionId).not.toBe(session.sessionId);
    expect(await store.find(session.sessionId, alice)).toMatchObject({ id: session.id, clientInfo: { name: 'c' } });
  });

  it('defaults to the default mount and a one-hour idle TTL', () => {
    expect(new InMemoryMcpSessionStore().settings).toEqual({ mount: 'default', idleTtlMs: 3_600_000 });
  });

  it('answers "not found" for an unknown id, another principal, another mount and a terminated session', async () => {
    const store = new InMemoryMcpSessionStore();
    const session = await store.open(opening);
    expect(await store.find('unknown', alice)).toBeNull();
    expect(await store.find(session.sessionId, bob)).toBeNull();
    const otherMount = new InMemoryMcpSessionStore({ mount: 'other' });
    expect(await otherMount.find(session.sessionId, alice)).toBeNull();
    await store.terminate(session);
    expect(await store.find(session.sessionId, alice)).toBeNull();
    expect(store.sessions[0].terminatedAt).toBeInstanceOf(Date);
  });

  it('ends a session left idle past the TTL, and keeps one in use alive', async () => {
    jest.useFakeTimers({ now: Date.UTC(2025, 0, 1) });
    const store = new InMemoryMcpSessionStore({ idleTtlMs: 1000 });
    const used = await store.open(opening);
    const idle = await store.open(opening);
    for (let i = 0; i < 3; i++) {
      jest.advanceTimersByTime(800);
      expect(await store.find(used.sessionId, alice)).not.toBeNull();
    }
    expect(store.isLive(idle.sessionId)).toBe(false);
    expect(await store.find(idle.sessionId, alice)).toBeNull();
    expect(store.sessions.find((s) => s.id === idle.id)?.terminatedAt).toEqual(new Date());
    expect(store.isLive(used.sessionId)).toBe(true);
  });

  it("stores the log level only on the principal's own session", async () => {
    const store = new InMemoryMcpSessionStore();
    const session = await store.open(opening);
    await store.setLogLevel(session.sessionId, bob, 'debug');
    expect((await store.find(session.sessionId, alice))?.logLevel).toBeNull();
    await store.setLogLevel(session.sessionId, alice, 'warning');
    expect((await store.find(session.sessionId, alice))?.logLevel).toBe('warning');
  });

  it('hands out copies, so a caller cannot change a stored session', async () => {
    const store = new InMemoryMcpSessionStore();
    const session = await store.open(opening);
    session.principalKey = 'bob';
    expect(await store.find(session.sessionId, bob)).toBeNull();
    expect(await store.find(session.sessionId, alice)).not.toBeNull();
  });
});
