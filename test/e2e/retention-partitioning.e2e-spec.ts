import { DataSource } from 'typeorm';
import {
  MCP_ENTITIES,
  MCP_MIGRATIONS,
  MCP_PARTITIONING_MIGRATIONS,
  McpModule,
  McpRetentionService,
  getMcpRetentionToken,
} from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { callRequest, openSession, post, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Inserts `count` inbound rows of the default mount created at `at` (one millisecond apart), with a trace id. */
async function insertEventsAt(dataSource: DataSource, count: number, at: Date): Promise<void> {
  await dataSource.query(
    `INSERT INTO mcp_events (id, created_at, direction, mount, kind, method, request, is_error, duration_ms, trace_id)
     SELECT gen_random_uuid()::text, $1::timestamp - g * interval '1 millisecond', 'inbound', 'default', 'request', 'tools/call', '{"jsonrpc":"2.0"}'::jsonb, false, 1, 'trace-' || g
       FROM generate_series(1, $2::int) AS g`,
    [at, count],
  );
}

async function dayOf(dataSource: DataSource, at: Date): Promise<string> {
  const rows: { day: string }[] = await dataSource.query(`SELECT to_char($1::timestamp, 'YYYYMMDD') AS day`, [at]);
  return rows[0].day;
}

async function partitions(dataSource: DataSource): Promise<string[]> {
  const rows: { name: string }[] = await dataSource.query(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'mcp_events'::regclass ORDER BY c.relname`,
  );
  return rows.map((row) => row.name);
}

async function relkind(dataSource: DataSource): Promise<string> {
  const rows: { kind: string }[] = await dataSource.query(
    `SELECT relkind AS kind FROM pg_class WHERE oid = 'mcp_events'::regclass`,
  );
  return rows[0].kind;
}

async function count(dataSource: DataSource, where = 'TRUE'): Promise<number> {
  const rows: { n: string }[] = await dataSource.query(`SELECT count(*) AS n FROM mcp_events WHERE ${where}`);
  return Number(rows[0].n);
}

async function primaryKey(dataSource: DataSource): Promise<string> {
  const rows: { definition: string }[] = await dataSource.query(
    `SELECT pg_get_indexdef(indexrelid) AS definition FROM pg_index WHERE indrelid = 'mcp_events'::regclass AND indisprimary`,
  );
  return rows[0].definition;
}

/**
 * The optional day partitioning of `mcp_events` on real PostgreSQL: the migration keeps every
 * row and every column (`trace_id` included) and index (one the host added included), the pruner drops the day
 * partitions wholly past the horizon and creates the coming days, new rows still insert, and
 * down() gives back a plain table that matches the entity.
 */
describe('mcp_events partitioned by day', () => {
  let db: TestDatabase;
  let migrations: DataSource;
  let app: RunningApp | undefined;
  const now = new Date();
  const daysAgo = (n: number) => new Date(now.getTime() - n * DAY);

  beforeAll(async () => {
    // The package's migrations run for real before the partitioning one, as on a host's database.
    db = await createTestDatabase('run');
    // An index of the host's own (on the package's trace_id column): the partitioning copies indexes generically.
    await db.dataSource.query(`CREATE INDEX "mcp_events_trace_id_idx" ON mcp_events ("trace_id")`);
    migrations = new DataSource({
      type: 'postgres',
      url: db.url,
      entities: MCP_ENTITIES,
      migrations: [...MCP_MIGRATIONS, ...MCP_PARTITIONING_MIGRATIONS],
    });
    await migrations.initialize();
  });

  afterAll(async () => {
    await app?.close();
    if (migrations?.isInitialized) await migrations.destroy();
    await db?.drop();
  });

  it('migrates up: a partitioned table with every row, column and index, a default partition and days ahead', async () => {
    await insertEventsAt(db.dataSource, 10, daysAgo(5));
    await insertEventsAt(db.dataSource, 10, daysAgo(3));
    await insertEventsAt(db.dataSource, 10, daysAgo(1));
    await insertEventsAt(db.dataSource, 10, now);

    expect((await migrations.runMigrations()).map((m) => m.name)).toEqual(['McpEventsPartitioning1767657600000']);

    expect(await relkind(db.dataSource)).toBe('p');
    expect(await count(db.dataSource)).toBe(40);
    expect(await count(db.dataSource, `trace_id = 'trace-7'`)).toBe(4);
    expect(await primaryKey(db.dataSource)).toContain('(id, created_at)');
    const names = await partitions(db.dataSource);
    expect(names).toContain('mcp_events_default');
    for (const n of [5, 4, 3, 2, 1, 0, -1, -2])
      expect(names).toContain(`mcp_events_p${await dayOf(db.dataSource, daysAgo(n))}`);
    const indexes: { name: string }[] = await db.dataSource.query(
      `SELECT indexname AS name FROM pg_indexes WHERE tablename = 'mcp_events' ORDER BY indexname`,
    );
    expect(indexes.map((i) => i.name)).toEqual([
      'mcp_events_created_at_idx',
      'mcp_events_pkey',
      'mcp_events_principal_created_at_idx',
      'mcp_events_session_ref_idx',
      'mcp_events_trace_id_idx',
    ]);
    // Rows of a day without a partition land in the default one.
    await insertEventsAt(db.dataSource, 5, daysAgo(200));
    const inDefault: { n: string }[] = await db.dataSource.query(`SELECT count(*) AS n FROM mcp_events_default`);
    expect(Number(inDefault[0].n)).toBe(5);
  });

  it("the pruner drops the days past the horizon, deletes the default partition's old rows, creates the coming days, and rows still insert", async () => {
    const twoDaysAhead = `mcp_events_p${await dayOf(db.dataSource, daysAgo(-2))}`;
    const tomorrow = `mcp_events_p${await dayOf(db.dataSource, daysAgo(-1))}`;
    await db.dataSource.query(`DROP TABLE "${twoDaysAhead}"`);
    await db.dataSource.query(`DROP TABLE "${tomorrow}"`);
    // A row of tomorrow lands in the default partition: that day cannot get its own partition now, and the row stays.
    await insertEventsAt(db.dataSource, 1, daysAgo(-1));
    app = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [FixtureTools],
          retention: { events: 2 * DAY, intervalMs: 10 * HOUR, batchPauseMs: 0 },
        }),
      ],
      providers: [FixtureTools],
    });
    const retention = app.app.get<McpRetentionService>(getMcpRetentionToken());

    const report = await retention.runOnce();

    const dropped = await Promise.all(
      [5, 4, 3].map(async (n) => `mcp_events_p${await dayOf(db.dataSource, daysAgo(n))}`),
    );
    expect(report.partitionsDropped).toEqual(dropped);
    expect(report.partitionsCreated).toEqual([twoDaysAhead]);
    expect(report.tables.mcp_events).toEqual({ rows: 5, batches: 1 });
    const names = await partitions(db.dataSource);
    for (const name of dropped) expect(names).not.toContain(name);
    expect(names).toContain(twoDaysAhead);
    expect(names).not.toContain(tomorrow);
    expect(await count(db.dataSource)).toBe(21);

    // The hot path still writes its rows (group-committed into today's partition).
    const session = await openSession(`${app.baseUrl}/mcp`);
    const call = await post(`${app.baseUrl}/mcp`, callRequest(7, 'echo', { text: 'after pruning' }), {
      token: 'token-alice',
      sessionId: session.sessionId,
      headers: versionHeader(),
    });
    expect(call.status).toBe(200);
    expect(call.text).toContain('after pruning');
    expect(
      await count(db.dataSource, `method = 'tools/call' AND request->'params'->'arguments'->>'text' = 'after pruning'`),
    ).toBe(1);
    // The 21 rows left, the session's initialize and notifications/initialized, and the call.
    expect(await count(db.dataSource)).toBe(24);

    // A second run finds nothing more to drop.
    const again = await retention.runOnce();
    expect(again.partitionsDropped).toEqual([]);
    await app.close();
    app = undefined;
  });

  it('migrates down to a plain table with every row, as the entity describes it', async () => {
    const before = await count(db.dataSource);
    await migrations.undoLastMigration();

    expect(await relkind(db.dataSource)).toBe('r');
    expect(await count(db.dataSource)).toBe(before);
    expect(await primaryKey(db.dataSource)).toContain('(id)');
    expect(await partitions(db.dataSource)).toEqual([]);
    const leftovers: unknown[] = await db.dataSource.query(
      `SELECT relname FROM pg_class WHERE relname LIKE 'mcp\\_events\\_%' AND relkind IN ('r', 'p')`,
    );
    expect(leftovers).toEqual([]);
    await db.dataSource.query(`DROP INDEX "mcp_events_trace_id_idx"`);
    expect(await db.dataSource.driver.createSchemaBuilder().log()).toMatchObject({ upQueries: [] });
  });
});
