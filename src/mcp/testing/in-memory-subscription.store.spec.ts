import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import type { McpSessionStore } from '../persistence/interfaces/mcp-session-store.interface';
import { InMemoryMcpSessionStore } from './in-memory-session.store';
import { InMemoryMcpSubscriptionStore } from './in-memory-subscription.store';

const alice = { key: 'alice', label: 'Alice', raw: 'alice' };
const opening = { principal: alice, protocolVersion: '2025-11-25', clientInfo: null, clientCapabilities: null };

describe('InMemoryMcpSubscriptionStore', () => {
  afterEach(() => jest.useRealTimers());

  it('keeps one subscription per session and URI, and unsubscribing is idempotent', async () => {
    const sessions = new InMemoryMcpSessionStore();
    const store = new InMemoryMcpSubscriptionStore(sessions);
    const session = await sessions.open(opening);
    await store.subscribe(session.sessionId, 'docs://a');
    await store.subscribe(session.sessionId, 'docs://a');
    expect(store.subscriptions).toHaveLength(1);
    expect(store.subscriptions[0]).toMatchObject({ mount: 'default', sessionId: session.sessionId, uri: 'docs://a' });
    expect(await store.subscribers('docs://a')).toEqual([session.sessionId]);
    expect(await store.subscribers('docs://b')).toEqual([]);
    await store.unsubscribe(session.sessionId, 'docs://a');
    await store.unsubscribe(session.sessionId, 'docs://a');
    expect(await store.subscribers('docs://a')).toEqual([]);
  });

  it('lists the live subscribers sorted by session id, ignoring terminated and idle sessions', async () => {
    jest.useFakeTimers({ now: Date.UTC(2025, 0, 1) });
    const sessions = new InMemoryMcpSessionStore({ idleTtlMs: 1000 });
    const store = new InMemoryMcpSubscriptionStore(sessions);
    const [a, b, ended, idle] = await Promise.all([1, 2, 3, 4].map(() => sessions.open(opening)));
    for (const s of [a, b, ended, idle]) await store.subscribe(s.sessionId, 'docs://a');
    await sessions.terminate(ended);
    jest.advanceTimersByTime(600);
    await sessions.find(a.sessionId, alice);
    await sessions.find(b.sessionId, alice);
    jest.advanceTimersByTime(600);
    expect(await store.subscribers('docs://a')).toEqual([a.sessionId, b.sessionId].sort());
  });

  it('gives each live subscriber with the principal key its session is bound to, in session id order', async () => {
    const sessions = new InMemoryMcpSessionStore();
    const store = new InMemoryMcpSubscriptionStore(sessions);
    const ofAlice = await sessions.open(opening);
    const ofBob = await sessions.open({ ...opening, principal: { key: 'bob', label: 'Bob', raw: 'bob' } });
    const ended = await sessions.open(opening);
    for (const s of [ofAlice, ofBob, ended]) await store.subscribe(s.sessionId, 'docs://a');
    await sessions.terminate(ended);
    const expected = [
      { sessionId: ofAlice.sessionId, principalKey: 'alice' },
      { sessionId: ofBob.sessionId, principalKey: 'bob' },
    ].sort((x, y) => (x.sessionId < y.sessionId ? -1 : 1));
    expect(await store.subscriberSessions('docs://a')).toEqual(expected);
    expect(await store.subscribers('docs://a')).toEqual(expected.map((subscriber) => subscriber.sessionId));
    expect(await store.subscriberSessions('docs://b')).toEqual([]);
  });

  it('ignores subscriptions of sessions its session store does not know (another mount)', async () => {
    const store = new InMemoryMcpSubscriptionStore(new InMemoryMcpSessionStore({ mount: 'm1' }));
    const other = new InMemoryMcpSessionStore({ mount: 'm2' });
    const session = await other.open(opening);
    await store.subscribe(session.sessionId, 'docs://a');
    expect(await store.subscribers('docs://a')).toEqual([]);
  });

  it('refuses a session store that is not the in-memory one', () => {
    const foreign: McpSessionStore = {
      open: jest.fn(),
      find: jest.fn(),
      setLogLevel: jest.fn(),
      terminate: jest.fn(),
      countOpen: jest.fn(),
    };
    expect(() => new InMemoryMcpSubscriptionStore(foreign as never)).toThrow(McpConfigurationError);
  });
});
