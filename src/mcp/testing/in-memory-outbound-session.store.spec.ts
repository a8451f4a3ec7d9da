import { InMemoryMcpOutboundSessionStore } from './in-memory-outbound-session.store';

const state = {
  remoteSessionId: 'r1',
  protocolVersion: '2025-06-18',
  serverInfo: { name: 's' },
  serverCapabilities: { tools: {} },
  endpoint: 'http https://a/mcp',
};

describe('InMemoryMcpOutboundSessionStore', () => {
  afterEach(() => jest.useRealTimers());

  it('saves one session per server and scope key, keeping its id and creation time on replace', async () => {
    jest.useFakeTimers({ now: Date.UTC(2025, 0, 1) });
    const store = new InMemoryMcpOutboundSessionStore();
    const id = await store.save('s', 'alice', state);
    const created = await store.find('s', 'alice');
    jest.advanceTimersByTime(1000);
    expect(await store.save('s', 'alice', { ...state, remoteSessionId: 'r2' })).toBe(id);
    const replaced = await store.find('s', 'alice');
    expect(replaced).toMatchObject({ id, remoteSessionId: 'r2', createdAt: created?.createdAt, closedAt: null });
    expect(replaced?.updatedAt.getTime()).toBe(created!.updatedAt.getTime() + 1000);
    expect(await store.find('s', 'bob')).toBeNull();
    expect(await store.find('other', 'alice')).toBeNull();
    expect(store.sessions).toHaveLength(1);
  });

  it('keeps the stored server info, capabilities and endpoint when the new state has none', async () => {
    const store = new InMemoryMcpOutboundSessionStore();
    await store.save('s', '', state);
    await store.save('s', '', {
      remoteSessionId: null,
      protocolVersion: '2025-11-25',
      serverInfo: null,
      serverCapabilities: null,
    });
    expect(await store.find('s', '')).toMatchObject({
      remoteSessionId: null,
      protocolVersion: '2025-11-25',
      serverInfo: { name: 's' },
      serverCapabilities: { tools: {} },
      endpoint: 'http https://a/mcp',
    });
  });

  it('closes a session (keeping the record) and reopens it on the next save with a new creation time', async () => {
    jest.useFakeTimers({ now: Date.UTC(2025, 0, 1) });
    const store = new InMemoryMcpOutboundSessionStore();
    const id = await store.save('s', 'alice', state);
    await store.close('s', 'alice');
    await store.close('s', 'alice');
    expect(await store.find('s', 'alice')).toBeNull();
    expect(store.sessions[0].closedAt).toEqual(new Date());
    jest.advanceTimersByTime(5000);
    expect(await store.save('s', 'alice', state)).toBe(id);
    expect(await store.find('s', 'alice')).toMatchObject({ id, closedAt: null, createdAt: new Date() });
  });

  it('finds the newest open verdict of a server at an endpoint, by any scope key', async () => {
    jest.useFakeTimers({ now: Date.UTC(2025, 0, 1) });
    const store = new InMemoryMcpOutboundSessionStore();
    await store.save('s', 'alice', { ...state, protocolVersion: '2025-06-18' });
    jest.advanceTimersByTime(10);
    await store.save('s', 'bob', { ...state, protocolVersion: '2025-11-25' });
    await store.save('s', 'carol', { ...state, endpoint: 'http https://b/mcp' });
    expect((await store.findVersion('s', 'http https://a/mcp'))?.protocolVersion).toBe('2025-11-25');
    await store.close('s', 'bob');
    expect((await store.findVersion('s', 'http https://a/mcp'))?.scopeKey).toBe('alice');
    expect(await store.findVersion('other', 'http https://a/mcp')).toBeNull();
    expect(await store.findVersion('s', 'http https://c/mcp')).toBeNull();
  });
});
