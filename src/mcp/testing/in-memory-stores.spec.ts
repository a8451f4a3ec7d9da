import { DEFAULT_MOUNT, DEFAULT_SESSION_IDLE_TTL_MS } from '../mcp.constants';
import { InMemoryMcpEventSink } from './in-memory-event-sink.store';
import { InMemoryMcpHandlerSwitchStore } from './in-memory-handler-switch.store';
import { InMemoryMcpOutboundSessionStore } from './in-memory-outbound-session.store';
import { InMemoryMcpSessionStore } from './in-memory-session.store';
import { createInMemoryMcpStores } from './in-memory-stores';
import { InMemoryMcpSubscriptionStore } from './in-memory-subscription.store';

const alice = { key: 'alice', label: 'Alice', raw: 'alice' };
const bob = { key: 'bob', label: 'Bob', raw: 'bob' };
const opening = (principal = alice) => ({
  principal,
  protocolVersion: '2025-11-25',
  clientInfo: null,
  clientCapabilities: null,
});

describe('createInMemoryMcpStores', () => {
  afterEach(() => jest.useRealTimers());

  it('builds a fresh set for the default mount and idle TTL when given no settings', async () => {
    const stores = createInMemoryMcpStores();
    expect(stores.sessions).toBeInstanceOf(InMemoryMcpSessionStore);
    expect(stores.subscriptions).toBeInstanceOf(InMemoryMcpSubscriptionStore);
    expect(stores.events).toBeInstanceOf(InMemoryMcpEventSink);
    expect(stores.outboundSessions).toBeInstanceOf(InMemoryMcpOutboundSessionStore);
    expect(stores.handlerSwitches).toBeInstanceOf(InMemoryMcpHandlerSwitchStore);
    expect(stores.handlerSwitches.mount).toBe(DEFAULT_MOUNT);
    expect(createInMemoryMcpStores({ mount: 'm1' }).handlerSwitches.mount).toBe('m1');
    expect(stores.sessions.settings).toEqual({ mount: DEFAULT_MOUNT, idleTtlMs: DEFAULT_SESSION_IDLE_TTL_MS });
    const session = await stores.sessions.open(opening());
    await stores.subscriptions.subscribe(session.sessionId, 'docs://a');
    expect(await stores.subscriptions.subscribers('docs://a')).toEqual([session.sessionId]);
    expect(createInMemoryMcpStores().sessions.sessions).toEqual([]);
  });

  it('counts the live sessions of a principal on its mount only, leaving out ended and idle ones', async () => {
    jest.useFakeTimers({ now: Date.UTC(2025, 0, 1) });
    const { sessions } = createInMemoryMcpStores({ mount: 'm1', idleTtlMs: 1000 });
    const other = new InMemoryMcpSessionStore({ mount: 'm2', idleTtlMs: 1000 });
    const [kept, ended, idle] = [
      await sessions.open(opening()),
      await sessions.open(opening()),
      await sessions.open(opening()),
    ];
    await sessions.open(opening(bob));
    await other.open(opening());
    await sessions.terminate(ended);
    expect(await sessions.countOpen(alice)).toBe(2);
    expect(await other.countOpen(alice)).toBe(1);
    jest.advanceTimersByTime(600);
    await sessions.find(kept.sessionId, alice);
    jest.advanceTimersByTime(600);
    expect(await sessions.countOpen(alice)).toBe(1);
    expect(await sessions.countOpen(bob)).toBe(0);
    expect(await other.countOpen(alice)).toBe(0);
    expect(idle.sessionId).not.toBe(kept.sessionId);
  });

  it('ignores terminating a session it never opened', async () => {
    const { sessions } = createInMemoryMcpStores();
    const foreign = await new InMemoryMcpSessionStore().open(opening());
    await sessions.terminate(foreign);
    expect(sessions.sessions).toEqual([]);
  });

  it('counts the URIs a session watches on its mount, leaving out the one named', async () => {
    const { sessions, subscriptions } = createInMemoryMcpStores({ mount: 'm1' });
    const [a, b] = [await sessions.open(opening()), await sessions.open(opening())];
    for (const uri of ['docs://1', 'docs://2', 'docs://3']) await subscriptions.subscribe(a.sessionId, uri);
    await subscriptions.subscribe(b.sessionId, 'docs://1');
    expect(await subscriptions.countForSession(a.sessionId)).toBe(3);
    expect(await subscriptions.countForSession(a.sessionId, 'docs://2')).toBe(2);
    expect(await subscriptions.countForSession(a.sessionId, 'docs://other')).toBe(3);
    expect(await subscriptions.countForSession(b.sessionId)).toBe(1);
    expect(await subscriptions.countForSession('unknown')).toBe(0);
  });

  it('lists many subscribers in session id order, whatever the order they subscribed in', async () => {
    const { sessions, subscriptions } = createInMemoryMcpStores();
    const opened = [];
    for (let i = 0; i < 12; i++) opened.push(await sessions.open(opening()));
    for (const session of [...opened].reverse()) await subscriptions.subscribe(session.sessionId, 'docs://a');
    const ids = opened.map((session) => session.sessionId);
    expect(await subscriptions.subscribers('docs://a')).toEqual([...ids].sort());
  });

  it('stores null server info, capabilities and endpoint for a first save that has none', async () => {
    const { outboundSessions } = createInMemoryMcpStores();
    await outboundSessions.save('s', 'alice', {
      remoteSessionId: 'r1',
      protocolVersion: '2025-06-18',
      serverInfo: null,
      serverCapabilities: null,
    });
    expect(await outboundSessions.find('s', 'alice')).toMatchObject({
      remoteSessionId: 'r1',
      serverInfo: null,
      serverCapabilities: null,
      endpoint: null,
    });
  });

  it('finds the most recently saved verdict even when an older one was first stored later', async () => {
    jest.useFakeTimers({ now: Date.UTC(2025, 0, 1) });
    const { outboundSessions } = createInMemoryMcpStores();
    const endpoint = 'http https://a/mcp';
    await outboundSessions.save('s', 'alice', {
      remoteSessionId: null,
      protocolVersion: '2025-06-18',
      serverInfo: null,
      serverCapabilities: null,
      endpoint,
    });
    jest.advanceTimersByTime(10);
    await outboundSessions.save('s', 'bob', {
      remoteSessionId: null,
      protocolVersion: '2025-11-25',
      serverInfo: null,
      serverCapabilities: null,
      endpoint,
    });
    jest.advanceTimersByTime(10);
    await outboundSessions.save('s', 'alice', {
      remoteSessionId: null,
      protocolVersion: '2025-03-26',
      serverInfo: null,
      serverCapabilities: null,
      endpoint,
    });
    expect(await outboundSessions.findVersion('s', endpoint)).toMatchObject({
      scopeKey: 'alice',
      protocolVersion: '2025-03-26',
    });
  });
});
