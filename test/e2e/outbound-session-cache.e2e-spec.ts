import { McpOutboundSession } from '../../src/mcp/stores';
import { TypeOrmOutboundSessionStore } from '../../src/mcp/persistence/typeorm/typeorm-outbound-session.store';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const state = (remoteSessionId: string | null) => ({
  remoteSessionId,
  protocolVersion: '2025-11-25',
  serverInfo: { name: 'peer', version: '1.0.0' },
  serverCapabilities: { tools: {} },
  endpoint: 'stdio ["node","server.js"]',
});

describe('TypeOrmOutboundSessionStore lookups on PostgreSQL', () => {
  let db: TestDatabase;
  let store: TypeOrmOutboundSessionStore;
  /** A second worker: its own store on the same database. */
  let other: TypeOrmOutboundSessionStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new TypeOrmOutboundSessionStore(db.dataSource.getRepository(McpOutboundSession));
    other = new TypeOrmOutboundSessionStore(db.dataSource.getRepository(McpOutboundSession));
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('serves a row without a remote session id from memory after the first lookup, until this process closes it', async () => {
    const id = await store.save('stdio-peer', '', state(null));
    expect(await store.find('stdio-peer', '')).toMatchObject({
      id,
      remoteSessionId: null,
      serverCapabilities: { tools: {} },
    });
    // With the table out of reach, only a lookup that asks no query can still answer.
    await db.dataSource.query('ALTER TABLE mcp_outbound_sessions RENAME TO mcp_outbound_sessions_away');
    try {
      expect(await store.find('stdio-peer', '')).toMatchObject({
        id,
        remoteSessionId: null,
        serverCapabilities: { tools: {} },
      });
      await expect(other.find('stdio-peer', '')).rejects.toThrow(/mcp_outbound_sessions/);
    } finally {
      await db.dataSource.query('ALTER TABLE mcp_outbound_sessions_away RENAME TO mcp_outbound_sessions');
    }
    await store.close('stdio-peer', '');
    expect(await store.find('stdio-peer', '')).toBeNull();
  });

  it('sees a row this process saved again at once, not the one it kept', async () => {
    await store.save('verdict-peer', 'alice', state(null));
    await store.find('verdict-peer', 'alice');
    await store.save('verdict-peer', 'alice', { ...state(null), serverCapabilities: { tools: {}, prompts: {} } });
    expect(await store.find('verdict-peer', 'alice')).toMatchObject({ serverCapabilities: { tools: {}, prompts: {} } });
  });

  it('reads a row with a remote session id from the database on every lookup, so the session another worker opened is continued', async () => {
    await store.save('http-peer', '', state('session-1'));
    expect(await store.find('http-peer', '')).toMatchObject({ remoteSessionId: 'session-1' });
    await other.save('http-peer', '', state('session-2'));
    expect(await store.find('http-peer', '')).toMatchObject({ remoteSessionId: 'session-2' });
    await other.close('http-peer', '');
    expect(await store.find('http-peer', '')).toBeNull();
  });
});
