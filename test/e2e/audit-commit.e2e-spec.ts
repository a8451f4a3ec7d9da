import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MCP_ENTITIES, McpClientModule, McpClientService, McpModule } from '../../src/mcp';
import { MCP_EVENT_SINK, McpEvent, type McpEventSink } from '../../src/mcp/stores';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { callRequest, openSession, post, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * Every `mcp_events` row, as it is inserted, notes the `synchronous_commit` setting and the
 * transaction id it sees from inside the transaction that writes it: a trigger in the database,
 * so what is observed is what PostgreSQL applied to the sink's own transaction.
 */
async function watchCommits(
  dataSource: DataSource,
): Promise<() => Promise<{ eventId: string; setting: string; tx: string }[]>> {
  await dataSource.query(`CREATE TABLE commit_seen (event_id varchar(36), setting text, tx text)`);
  await dataSource.query(`
    CREATE FUNCTION note_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO commit_seen VALUES (NEW.id, current_setting('synchronous_commit'), txid_current()::text);
      RETURN NEW;
    END $$`);
  await dataSource.query(
    `CREATE TRIGGER note_commit AFTER INSERT ON mcp_events FOR EACH ROW EXECUTE FUNCTION note_commit()`,
  );
  return () => dataSource.query(`SELECT event_id AS "eventId", setting, tx FROM commit_seen`);
}

async function boot(
  typeorm: TypeOrmModuleOptions,
  commit?: 'sync' | 'async',
): Promise<{ app: INestApplication; url: string }> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot(typeorm),
      McpModule.forRoot({ auth: fixtureAuth, ...(commit ? { advanced: { audit: { commit } } } : {}) }),
    ],
    providers: [FixtureTools],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.listen(0, '127.0.0.1');
  return { app, url: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/mcp` };
}

/** Sends `count` echo calls at once on one session; returns the texts sent by request id. */
async function burst(url: string, count: number): Promise<Map<number, string>> {
  const { sessionId } = await openSession(url);
  const sent = new Map<number, string>();
  for (let id = 1; id <= count; id++) sent.set(id, `row ${id} ${'é'.repeat(id)}`);
  const replies = await Promise.all(
    [...sent].map(([id, text]) =>
      post(url, callRequest(id, 'echo', { text }), { sessionId, headers: versionHeader() }),
    ),
  );
  replies.forEach((reply, i) =>
    expect(reply.json).toMatchObject({ id: i + 1, result: { content: [{ type: 'text', text: sent.get(i + 1) }] } }),
  );
  return sent;
}

/** Each answered call has exactly one row holding the request and the response it was answered with. */
function expectRows(rows: McpEvent[], sent: Map<number, string>): void {
  for (const [id, text] of sent) {
    const mine = rows.filter((row) => row.method === 'tools/call' && (row.request as { id?: unknown })?.id === id);
    expect(mine).toEqual([
      expect.objectContaining({
        direction: 'inbound',
        mount: 'default',
        principalKey: 'alice',
        kind: 'request',
        status: 200,
        isError: false,
        request: expect.objectContaining({ params: { name: 'echo', arguments: { text } } }),
        response: expect.objectContaining({
          id,
          result: expect.objectContaining({ content: [{ type: 'text', text }] }),
        }),
      }),
    ]);
  }
}

describe.each([
  { label: "'async'", commit: 'async' as const, setting: 'off' },
  { label: "'sync'", commit: 'sync' as const, setting: 'on' },
  { label: 'left out', commit: undefined, setting: 'on' },
])('audit.commit $label on PostgreSQL', ({ commit, setting }) => {
  let db: TestDatabase;
  let app: INestApplication;
  let url: string;
  let seen: Awaited<ReturnType<typeof watchCommits>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    seen = await watchCommits(db.dataSource);
    ({ app, url } = await boot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }, commit));
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it(`writes every row of a burst of concurrent calls, each in a transaction with synchronous_commit ${setting}`, async () => {
    const sent = await burst(url, 40);
    const rows = await db.dataSource.getRepository(McpEvent).find();
    expectRows(rows, sent);
    const notes = await seen();
    // Every row the sink wrote (the initialize and the calls) was seen by the trigger, none twice.
    expect(notes.map((note) => note.eventId).sort()).toEqual(rows.map((row) => row.id).sort());
    expect(new Set(notes.map((note) => note.setting))).toEqual(new Set([setting]));
  });

  it(`commits rows recorded together in one transaction with synchronous_commit ${setting}`, async () => {
    const sink = app.get<McpEventSink>(MCP_EVENT_SINK, { strict: false });
    const before = (await seen()).length;
    // Submitted in one tick, so the group committer writes them as one batch.
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        sink.record({
          createdAt: new Date(),
          direction: 'outbound',
          server: 'batch',
          kind: 'request',
          method: `batch/${i}`,
          durationMs: i,
        }),
      ),
    );
    const rows = await db.dataSource.getRepository(McpEvent).findBy({ server: 'batch' });
    expect(rows.map((row) => row.method).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `batch/${i}`).sort());
    const notes = (await seen()).slice(before);
    expect(notes.map((note) => note.eventId).sort()).toEqual(rows.map((row) => row.id).sort());
    expect(new Set(notes.map((note) => note.tx)).size).toBe(1);
    expect(notes[0].setting).toBe(setting);
  });
});

describe("McpClientModule audit.commit 'async' next to a mount left 'sync', on PostgreSQL", () => {
  let db: TestDatabase;
  let app: INestApplication;
  let seen: Awaited<ReturnType<typeof watchCommits>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    seen = await watchCommits(db.dataSource);
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        McpModule.forRoot({ auth: fixtureAuth }),
        McpClientModule.forRoot({
          servers: { local: { transport: 'toolset', principal: 'alice' } },
          advanced: { audit: { commit: 'async' } },
        }),
      ],
      providers: [FixtureTools],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('commits the outbound rows of client calls with synchronous_commit off, and the mount keeps its own mode', async () => {
    const client = app.get(McpClientService);
    const texts = Array.from({ length: 10 }, (_, i) => `outbound ${i}`);
    const results = await Promise.all(texts.map((text) => client.callTool('local', 'echo', { text })));
    expect(results.map((result) => result.content)).toEqual(texts.map((text) => [{ type: 'text', text }]));
    const outbound = await db.dataSource
      .getRepository(McpEvent)
      .findBy({ direction: 'outbound', method: 'tools/call' });
    expect(
      outbound.map((row) => (row.request as { params: { arguments: { text: string } } }).params.arguments.text).sort(),
    ).toEqual([...texts].sort());
    const byId = new Map((await seen()).map((note) => [note.eventId, note.setting]));
    expect(new Set(outbound.map((row) => byId.get(row.id)))).toEqual(new Set(['off']));

    // The mount's own rows (an HTTP session opened on it) keep the mount's mode.
    await openSession(`http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/mcp`);
    const inbound = await db.dataSource.getRepository(McpEvent).findBy({ direction: 'inbound' });
    const notes = new Map((await seen()).map((note) => [note.eventId, note.setting]));
    expect(inbound.map((row) => row.method).sort()).toEqual(['initialize', 'notifications/initialized']);
    expect(new Set(inbound.map((row) => notes.get(row.id)))).toEqual(new Set(['on']));
  });
});

describe('audit.commit async on SQLite', () => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    ({ app, url } = await boot(
      { type: 'better-sqlite3', database: ':memory:', entities: MCP_ENTITIES, synchronize: true },
      'async',
    ));
  });

  afterAll(async () => {
    await app?.close();
  });

  it('commits as in sync mode: every row of a burst is there with its content', async () => {
    const sent = await burst(url, 20);
    expectRows(await app.get(DataSource).getRepository(McpEvent).find(), sent);
  });
});
