import type { McpPrincipal } from '../../interfaces/principal.interface';
import type { McpInboundSessionRecord } from '../../persistence/interfaces/mcp-session-store.interface';
import { InMemoryMcpSessionStore } from '../../testing/in-memory-session.store';
import type { McpResolvedOptions } from '../config/mcp.options';
import type { McpSessionBus, McpSessionChangeListener } from './mcp-session-bus';
import { DEFAULT_SESSION_CACHE, type McpResolvedSessionCache } from './mcp-session-cache.options';
import { McpCachedSessionStore } from './mcp-cached-session.store';

const alice: McpPrincipal = { key: 'alice', label: 'alice', raw: null };
const bob: McpPrincipal = { key: 'bob', label: 'bob', raw: null };

/** The in-memory store, counting finds; a find can be held until the test lets it answer. */
class GatedStore extends InMemoryMcpSessionStore {
  finds = 0;
  gate: Promise<void> | null = null;

  override async find(sessionId: string, principal: McpPrincipal): Promise<McpInboundSessionRecord | null> {
    this.finds += 1;
    const found = await super.find(sessionId, principal);
    if (this.gate) await this.gate;
    return found;
  }
}

/** What the layer uses of the bus: the messages other replicas send are delivered by hand here. */
class BusEnd {
  readonly listeners = new Set<McpSessionChangeListener>();
  readonly published: string[] = [];
  readonly lost = new Set<() => void>();
  listening = true;

  onMessagesLost(listener: () => void): () => void {
    this.lost.add(listener);
    return () => this.lost.delete(listener);
  }

  onSessionChange(listener: McpSessionChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async sessionChanged(sessionId: string): Promise<void> {
    this.published.push(sessionId);
  }

  fromOtherReplica(sessionId: string, principalKey?: string): void {
    for (const listener of this.listeners) listener(sessionId, principalKey);
  }
}

function layer(cache: McpResolvedSessionCache = DEFAULT_SESSION_CACHE) {
  const store = new GatedStore();
  const bus = new BusEnd();
  const options = { mount: 'default', sessions: { idleTtlMs: 3_600_000, cache } } as McpResolvedOptions;
  return { store, bus, sessions: new McpCachedSessionStore(options, store, bus as unknown as McpSessionBus) };
}

const newSession = { principal: alice, protocolVersion: '2025-11-25', clientInfo: null, clientCapabilities: null };

describe('McpCachedSessionStore', () => {
  it('serves an opened session from memory to its principal; anyone else is asked of the store', async () => {
    const { store, sessions } = layer();
    const opened = await sessions.open(newSession);
    expect((await sessions.find(opened.sessionId, alice))?.id).toBe(opened.id);
    expect(store.finds).toBe(0);
    expect(await sessions.find(opened.sessionId, bob)).toBeNull();
    expect(await sessions.find('unknown', alice)).toBeNull();
    expect(store.finds).toBe(2);
    expect((await sessions.find(opened.sessionId, alice))?.id).toBe(opened.id);
    expect(store.finds).toBe(2);
  });

  it('with the cache off, asks the store on every find', async () => {
    const { store, sessions } = layer(false);
    const opened = await sessions.open(newSession);
    for (let i = 0; i < 3; i++) await sessions.find(opened.sessionId, alice);
    expect(store.finds).toBe(3);
    expect(sessions.cachedSessions).toBe(0);
  });

  it('drops a session another replica ended, and refuses it from then on', async () => {
    const { store, bus, sessions } = layer();
    const opened = await sessions.open(newSession);
    await store.terminate(opened); // ended through another replica
    expect(await sessions.find(opened.sessionId, alice)).not.toBeNull(); // still the copy in memory
    bus.fromOtherReplica(opened.sessionId);
    expect(await sessions.find(opened.sessionId, alice)).toBeNull();
  });

  it('keeps a session when the end message names another principal (a stranger guessing the id)', async () => {
    const { store, bus, sessions } = layer();
    const opened = await sessions.open(newSession);
    bus.fromOtherReplica(opened.sessionId, 'bob');
    expect(await sessions.find(opened.sessionId, alice)).not.toBeNull();
    expect(store.finds).toBe(0);
    bus.fromOtherReplica(opened.sessionId, 'alice');
    await sessions.find(opened.sessionId, alice);
    expect(store.finds).toBe(1);
  });

  it('does not cache a read that was in flight when the session ended elsewhere', async () => {
    const { store, bus, sessions } = layer();
    const opened = await store.open(newSession); // opened on another replica
    let release!: () => void;
    store.gate = new Promise<void>((resolve) => (release = resolve));
    const reading = sessions.find(opened.sessionId, alice);
    await new Promise((resolve) => setImmediate(resolve));
    await store.terminate(opened);
    bus.fromOtherReplica(opened.sessionId);
    release();
    expect(await reading).not.toBeNull(); // the store saw it live
    store.gate = null;
    expect(await sessions.find(opened.sessionId, alice)).toBeNull();
    expect(store.finds).toBe(2);
  });

  it('setLogLevel stores the level, reads it back on the next find and tells the other replicas', async () => {
    const { bus, sessions } = layer();
    const opened = await sessions.open(newSession);
    await sessions.setLogLevel(opened.sessionId, alice, 'debug');
    expect((await sessions.find(opened.sessionId, alice))?.logLevel).toBe('debug');
    expect(bus.published).toEqual([opened.sessionId]);
  });

  it('terminate ends the session in the store and in memory', async () => {
    const { store, sessions } = layer();
    const opened = await sessions.open(newSession);
    await sessions.terminate(opened);
    expect(await sessions.find(opened.sessionId, alice)).toBeNull();
    expect(store.sessions[0].terminatedAt).toBeInstanceOf(Date);
    expect(await sessions.countOpen(alice)).toBe(0);
  });

  it('asks the store on every find while the bus is not listening, and starts over when messages were lost', async () => {
    const { store, bus, sessions } = layer();
    const opened = await sessions.open(newSession);
    bus.listening = false;
    await sessions.find(opened.sessionId, alice);
    await sessions.find(opened.sessionId, alice);
    expect(store.finds).toBe(2);
    bus.listening = true;
    await store.terminate(opened); // ended elsewhere while the bus was down
    for (const listener of bus.lost) listener();
    expect(sessions.cachedSessions).toBe(0);
    expect(await sessions.find(opened.sessionId, alice)).toBeNull();
  });

  it('holds at most maxEntries sessions', async () => {
    const { sessions } = layer({ ttlMs: 60_000, maxEntries: 2 });
    for (let i = 0; i < 5; i++) await sessions.open(newSession);
    expect(sessions.cachedSessions).toBe(2);
  });
});
