import { DataSource } from 'typeorm';
import { MCP_ENTITIES, MCP_MIGRATIONS } from '../../src/mcp';
import { McpEvent, McpHandlerSwitch, McpInboundSession } from '../../src/mcp/stores';
import { JsonText } from '../../src/mcp/persistence/json-text';
import { EntitySql } from '../../src/mcp/persistence/typeorm/entity-sql';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** Tables, columns, indexes, constraints and the applied migrations of a database, to compare two of them. */
async function schemaOf(dataSource: DataSource): Promise<unknown> {
  const [columns, indexes, constraints, migrations] = await Promise.all([
    dataSource.query(
      `SELECT table_name, column_name, ordinal_position, data_type, character_maximum_length, is_nullable, column_default FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
    ),
    dataSource.query(
      `SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY tablename, indexname`,
    ),
    dataSource.query(
      `SELECT c.conrelid::regclass::text AS "table", c.conname, pg_get_constraintdef(c.oid) AS definition FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = 'public' ORDER BY 1, 2`,
    ),
    dataSource.query(`SELECT timestamp, name FROM migrations ORDER BY id`),
  ]);
  return { columns, indexes, constraints, migrations };
}

describe('shipped migrations and entities', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    // The migrations run for real here: the other suites get a copy of a template they built once.
    db = await createTestDatabase('run');
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('leave PostgreSQL exactly as the entities describe it (no pending schema change)', async () => {
    const pending = await db.dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('create exactly the package tables, the tasks last, with the registry switches unique key', async () => {
    expect(MCP_MIGRATIONS.map((migration) => migration.name)).toEqual([
      'CreateMcpTables1764489600000',
      'AddMcpServerFeatures1764576000000',
      'AddOutboundSessionEndpoint1767225600000',
      'AddMcpHandlerSwitches1767312000000',
      'AddMcpTasks1767398400000',
      'AddMcpEventTraceId1767484800000',
      'AddMcpRetentionIndexes1767571200000',
      'AddMcpOAuthGrants1767744000000',
      'AddMcpOAuthClients1767830400000',
      'AddMcpEventPrincipalIndex1767916800000',
      'AddMcpOAuthProviderRecords1768003200000',
    ]);
    const tables: { table_name: string }[] = await db.dataSource.query(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name LIKE 'mcp\\_%' ORDER BY table_name`,
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      'mcp_events',
      'mcp_handler_switches',
      'mcp_inbound_sessions',
      'mcp_oauth_authorizations',
      'mcp_oauth_clients',
      'mcp_oauth_grants',
      'mcp_oauth_provider_records',
      'mcp_outbound_sessions',
      'mcp_resource_subscriptions',
      'mcp_tasks',
    ]);
    const columns: {
      column_name: string;
      data_type: string;
      is_nullable: string;
      character_maximum_length: number | null;
    }[] = await db.dataSource.query(
      `SELECT column_name, data_type, is_nullable, character_maximum_length FROM information_schema.columns WHERE table_name = 'mcp_handler_switches' ORDER BY ordinal_position`,
    );
    expect(columns).toEqual([
      { column_name: 'id', data_type: 'character varying', is_nullable: 'NO', character_maximum_length: 36 },
      { column_name: 'mount', data_type: 'character varying', is_nullable: 'NO', character_maximum_length: 128 },
      { column_name: 'kind', data_type: 'character varying', is_nullable: 'NO', character_maximum_length: 16 },
      { column_name: 'name', data_type: 'character varying', is_nullable: 'NO', character_maximum_length: 1024 },
      {
        column_name: 'principal_key',
        data_type: 'character varying',
        is_nullable: 'NO',
        character_maximum_length: 255,
      },
      {
        column_name: 'created_at',
        data_type: 'timestamp without time zone',
        is_nullable: 'NO',
        character_maximum_length: null,
      },
    ]);
    const indexes: { indexname: string; indexdef: string }[] = await db.dataSource.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'mcp_handler_switches' ORDER BY indexname`,
    );
    expect(indexes.map((i) => i.indexname)).toEqual([
      'mcp_handler_switches_handler_principal_uq',
      'mcp_handler_switches_pkey',
    ]);
    expect(indexes[0].indexdef).toBe(
      'CREATE UNIQUE INDEX mcp_handler_switches_handler_principal_uq ON public.mcp_handler_switches USING btree (mount, kind, name, principal_key)',
    );
  });

  it('give mcp_tasks its columns and the owner index', async () => {
    const columns: { column_name: string; data_type: string; is_nullable: string }[] = await db.dataSource.query(
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = 'mcp_tasks' ORDER BY ordinal_position`,
    );
    expect(columns.map((c) => `${c.column_name} ${c.data_type} ${c.is_nullable}`)).toEqual([
      'id character varying NO',
      'mount character varying NO',
      'principal_key character varying NO',
      'session_id character varying YES',
      'tool_name character varying NO',
      'arguments_digest character varying NO',
      'payload jsonb NO',
      'status character varying NO',
      'status_message text YES',
      'outcome jsonb YES',
      'ttl_ms bigint YES',
      'poll_interval_ms integer NO',
      'created_at timestamp without time zone NO',
      'updated_at timestamp without time zone NO',
      'expires_at timestamp without time zone YES',
      'started_at timestamp without time zone YES',
      'worker character varying YES',
      'attempt integer NO',
    ]);
    const indexes: { indexname: string }[] = await db.dataSource.query(
      `SELECT indexname FROM pg_indexes WHERE tablename = 'mcp_tasks' ORDER BY indexname`,
    );
    expect(indexes.map((i) => i.indexname)).toEqual([
      'mcp_tasks_expires_at_idx',
      'mcp_tasks_owner_created_idx',
      'mcp_tasks_pkey',
    ]);
  });

  it('undo the registry switches, tasks, trace id, retention indexes, OAuth grants, OAuth clients, event principal index and OAuth provider records migrations, and redo them', async () => {
    const other = await createTestDatabase('run');
    try {
      await other.dataSource.undoLastMigration();
      const providerTables: unknown[] = await other.dataSource.query(
        `SELECT table_name FROM information_schema.tables WHERE table_name = 'mcp_oauth_provider_records'`,
      );
      expect(providerTables).toEqual([]);
      await other.dataSource.undoLastMigration();
      const principalIndex: unknown[] = await other.dataSource.query(
        `SELECT indexname FROM pg_indexes WHERE indexname = 'mcp_events_principal_created_at_idx'`,
      );
      expect(principalIndex).toEqual([]);
      await other.dataSource.undoLastMigration();
      const clientTables: unknown[] = await other.dataSource.query(
        `SELECT table_name FROM information_schema.tables WHERE table_name = 'mcp_oauth_clients'`,
      );
      expect(clientTables).toEqual([]);
      await other.dataSource.undoLastMigration();
      const oauthTables: unknown[] = await other.dataSource.query(
        `SELECT table_name FROM information_schema.tables WHERE table_name IN ('mcp_oauth_grants', 'mcp_oauth_authorizations')`,
      );
      expect(oauthTables).toEqual([]);
      await other.dataSource.undoLastMigration();
      const retentionIndexes: unknown[] = await other.dataSource.query(
        `SELECT indexname FROM pg_indexes WHERE indexname LIKE '%\\_at\\_idx' AND indexname <> 'mcp_events_created_at_idx'`,
      );
      expect(retentionIndexes).toEqual([]);
      await other.dataSource.undoLastMigration();
      const traceColumn: unknown[] = await other.dataSource.query(
        `SELECT column_name FROM information_schema.columns WHERE table_name = 'mcp_events' AND column_name = 'trace_id'`,
      );
      expect(traceColumn).toEqual([]);
      await other.dataSource.undoLastMigration();
      await other.dataSource.undoLastMigration();
      const gone: unknown[] = await other.dataSource.query(
        `SELECT table_name FROM information_schema.tables WHERE table_name IN ('mcp_handler_switches', 'mcp_tasks')`,
      );
      expect(gone).toEqual([]);
      expect((await other.dataSource.runMigrations()).map((migration) => migration.name)).toEqual([
        'AddMcpHandlerSwitches1767312000000',
        'AddMcpTasks1767398400000',
        'AddMcpEventTraceId1767484800000',
        'AddMcpRetentionIndexes1767571200000',
        'AddMcpOAuthGrants1767744000000',
        'AddMcpOAuthClients1767830400000',
        'AddMcpEventPrincipalIndex1767916800000',
        'AddMcpOAuthProviderRecords1768003200000',
      ]);
      expect(await other.dataSource.driver.createSchemaBuilder().log()).toMatchObject({ upQueries: [] });
    } finally {
      await other.drop();
    }
  });

  it('give the other suites, through the migrated template they copy, the same schema and migration rows as running them', async () => {
    const copy = await createTestDatabase();
    try {
      const migrated = await schemaOf(db.dataSource);
      expect(migrated).toMatchObject({ migrations: MCP_MIGRATIONS.map((migration) => ({ name: migration.name })) });
      expect(await schemaOf(copy.dataSource)).toEqual(migrated);
    } finally {
      await copy.drop();
    }
  });

  it('store envelopes as jsonb on PostgreSQL', async () => {
    const rows: { column_name: string; data_type: string }[] = await db.dataSource.query(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'mcp_events' AND column_name IN ('request', 'response')`,
    );
    expect(rows.map((r) => r.data_type)).toEqual(['jsonb', 'jsonb']);
  });

  it('create the same tables on SQLite and round-trip sessions, events and switches', async () => {
    const sqlite = new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: MCP_ENTITIES,
      synchronize: true,
    });
    await sqlite.initialize();
    try {
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      await sqlite.getRepository(McpInboundSession).insert({
        id: 's1',
        mount: 'default',
        sessionId: 'abc',
        principalKey: 'alice',
        principalLabel: 'Alice',
        protocolVersion: '2025-11-25',
        clientInfo: { name: 'c' },
        clientCapabilities: {},
        createdAt: now,
        lastSeenAt: now,
        terminatedAt: null,
      });
      await sqlite.getRepository(McpEvent).insert({
        id: 'e1',
        createdAt: now,
        direction: 'inbound',
        kind: 'request',
        method: 'tools/call',
        request: { jsonrpc: '2.0', id: 1 },
        response: { ok: true },
        durationMs: 3,
        isError: true,
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
        {
          id: 'e2',
          createdAt: now,
          direction: 'inbound',
          kind: 'request',
          method: 'ping',
          request: new JsonText('{"jsonrpc":"2.0","id":2}'),
          response: { ok: 1 },
          durationMs: 1,
          isError: false,
        } as never,
      ]);
      const written = await sqlite.getRepository(McpEvent).findOneByOrFail({ id: 'e2' });
      expect(written).toMatchObject({
        request: { jsonrpc: '2.0', id: 2 },
        response: { ok: 1 },
        isError: false,
        method: 'ping',
      });

      // Registry switches: "everyone" is the empty key, and the unique key refuses a second one.
      const switches = sqlite.getRepository(McpHandlerSwitch);
      await switches.insert({
        id: 'w1',
        mount: 'default',
        kind: 'tool',
        name: 'greet',
        principalKey: '',
        createdAt: now,
      });
      await expect(
        switches.insert({ id: 'w2', mount: 'default', kind: 'tool', name: 'greet', principalKey: '', createdAt: now }),
      ).rejects.toThrow(/UNIQUE constraint failed/);
      expect(await switches.find()).toEqual([
        { id: 'w1', mount: 'default', kind: 'tool', name: 'greet', principalKey: '', createdAt: now },
      ]);
    } finally {
      await sqlite.destroy();
    }
  });
});
