import { DataSource } from 'typeorm';
import { MCP_ENTITIES, McpEvent, McpInboundSession } from '../../src/mcp';
import { JsonText } from '../../src/mcp/persistence/json-text';
import { EntitySql } from '../../src/mcp/persistence/typeorm/entity-sql';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

describe('shipped migrations and entities', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('leave PostgreSQL exactly as the entities describe it (no pending schema change)', async () => {
    const pending = await db.dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('store envelopes as jsonb on PostgreSQL', async () => {
    const rows: { column_name: string; data_type: string }[] = await db.dataSource.query(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'mcp_events' AND column_name IN ('request', 'response')`,
    );
    expect(rows.map((r) => r.data_type)).toEqual(['jsonb', 'jsonb']);
  });

  it('create the same tables on SQLite and round-trip sessions and events', async () => {
    const sqlite = new DataSource({ type: 'better-sqlite3', database: ':memory:', entities: MCP_ENTITIES, synchronize: true });
    await sqlite.initialize();
    try {
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      await sqlite.getRepository(McpInboundSession).insert({
        id: 's1', mount: 'default', sessionId: 'abc', principalKey: 'alice', principalLabel: 'Alice',
        protocolVersion: '2025-11-25', clientInfo: { name: 'c' }, clientCapabilities: {}, createdAt: now, lastSeenAt: now, terminatedAt: null,
      });
      await sqlite.getRepository(McpEvent).insert({
        id: 'e1', createdAt: now, direction: 'inbound', kind: 'request', method: 'tools/call',
        request: { jsonrpc: '2.0', id: 1 }, response: { ok: true }, durationMs: 3, isError: true,
      });
      const session = await sqlite.getRepository(McpInboundSession).findOneByOrFail({ sessionId: 'abc' });
      expect(session.clientInfo).toEqual({ name: 'c' });
      expect(session.createdAt.getTime()).toBe(now.getTime());
      const event = await sqlite.getRepository(McpEvent).findOneByOrFail({ id: 'e1' });
      expect(event.request).toEqual({ jsonrpc: '2.0', id: 1 });
      expect(event.isError).toBe(true);

      // The hot path's hand-built SQL reads and writes the same values as the repository.
      const [found] = await new EntitySql(sqlite, McpInboundSession).findIn('sessionId', ['abc']);
      expect(found).toMatchObject({ clientInfo: { name: 'c' }, clientCapabilities: {}, principalKey: 'alice' });
      expect(found.createdAt.getTime()).toBe(now.getTime());
      await new EntitySql(sqlite, McpEvent).insert([
        { id: 'e2', createdAt: now, direction: 'inbound', kind: 'request', method: 'ping', request: new JsonText('{"jsonrpc":"2.0","id":2}'), response: { ok: 1 }, durationMs: 1, isError: false } as never,
      ]);
      const written = await sqlite.getRepository(McpEvent).findOneByOrFail({ id: 'e2' });
      expect(written).toMatchObject({ request: { jsonrpc: '2.0', id: 2 }, response: { ok: 1 }, isError: false, method: 'ping' });
    } finally {
      await sqlite.destroy();
    }
  });
});
