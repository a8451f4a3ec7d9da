import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Client } from 'pg';
import { MCP_ENTITIES, MCP_MIGRATIONS, McpModule } from '../../src/mcp';
import { mcpPostgresHostList } from '../../src/mcp/stores';
import { isDependencyUnavailable } from '../../src/mcp/persistence/database-failures';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { createHttpApp } from '../support/http-app';
import { callRequest, openSession, post, versionHeader } from '../support/mcp-wire';
import { startPostgresPair, type PostgresPair } from '../support/postgres-pair';
import { freePort } from './support/free-port';
import { RecordingLogger, type FaultApp } from './support/fault-app';
import { pollUntil } from './support/free-port';
import { startLoad, type LoadAnswer } from './support/load-driver';

jest.setTimeout(120_000);

const DATABASE_TIMEOUT_MS = 1500;
const CALLERS = 4;

function isUnavailableAnswer(answer: LoadAnswer): boolean {
  const body = answer.json as { jsonrpc?: string; error?: { code?: number }; result?: unknown } | undefined;
  return answer.status === 503 && body?.jsonrpc === '2.0' && body.error?.code === -32603 && body.result === undefined;
}

/**
 * A primary with a synchronous streaming standby; the app is connected with a host list and
 * `target_session_attrs=read-write`. The primary crashes and the standby is promoted while
 * callers loop `tools/call`: 503s with a JSON-RPC body in between, service without a restart
 * after, and every answered call has exactly one row on the new primary.
 */
describe('PostgreSQL failover to a promoted synchronous standby', () => {
  let pair: PostgresPair;
  let server: FaultApp;
  let url: string;
  const sessions: string[] = [];

  beforeAll(async () => {
    pair = await startPostgresPair({ primaryPort: await freePort(), standbyPort: await freePort(), sync: true });
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          ...mcpPostgresHostList(pair.hostListUrl),
          entities: MCP_ENTITIES,
          migrations: MCP_MIGRATIONS,
          migrationsRun: true,
          retryAttempts: 0,
          extra: {
            ...mcpPostgresHostList(pair.hostListUrl).extra,
            max: 10,
            connectionTimeoutMillis: 1000,
            idleTimeoutMillis: 10_000,
          },
        }),
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [FixtureTools],
          advanced: { database: { timeoutMs: DATABASE_TIMEOUT_MS } },
        }),
      ],
      providers: [FixtureTools],
    }).compile();
    const logger = new RecordingLogger();
    const app = createHttpApp(moduleRef, 'express', { logger });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    server = { app, baseUrl: `http://127.0.0.1:${port}`, logger, close: () => app.close() };
    url = `${server.baseUrl}/mcp`;
    for (let i = 0; i < CALLERS; i++) sessions.push((await openSession(url)).sessionId);
  });

  afterAll(async () => {
    await server?.close().catch(() => undefined);
    await pair?.destroy();
  });

  it('a pool on the standby alone is refused with a read-only error that answers 503', async () => {
    const options = mcpPostgresHostList(`postgres://postgres@127.0.0.1:${pair.standbyPort}/test`);
    // `extra.Client` is typed unknown (pg ships no declarations): a node-postgres client class, taking its config.
    const Standby = options.extra.Client as new (config: {
      host: string;
      port: number;
      user: string;
      database: string;
    }) => Client;
    const client = new Standby({ host: options.host, port: options.port, user: 'postgres', database: 'test' });
    const error = await client.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      code: '25006',
      message: `The database at 127.0.0.1:${pair.standbyPort} is read-only (a standby?)`,
    });
    expect(isDependencyUnavailable(error)).toBe(true);
  });

  it('primary crashed, standby promoted: 503 with a JSON-RPC body in between, then service; one row per answer on the new primary', async () => {
    const load = startLoad({ concurrency: CALLERS, durationMs: 60_000, pauseMs: 20 }, async (index, caller) => {
      const id = `fo-${caller}-${index}`;
      const reply = await post(url, callRequest(id, 'echo', { text: id }), {
        sessionId: sessions[caller],
        headers: versionHeader(),
      });
      return { status: reply.status, body: reply.text, tag: id };
    });
    await pollUntil('answers before the crash', async () =>
      load.answers.filter((a) => a.status === 200).length >= CALLERS * 2 ? true : undefined,
    );
    const crashedAt = Date.now();
    pair.stopPrimary();
    await pollUntil('a 503 after the crash', async () =>
      load.answers.some((a) => a.startedAt >= crashedAt && a.status === 503) ? true : undefined,
    );
    const promotingAt = Date.now();
    pair.promoteStandby();
    await pollUntil(
      'calls answered 200 after the promotion',
      async () =>
        load.answers.filter((a) => a.status === 200 && a.startedAt > promotingAt).length >= CALLERS * 2
          ? true
          : undefined,
      60_000,
    );
    const answers = await load.stop();
    const firstBack = Math.min(
      ...answers.filter((a) => a.status === 200 && a.startedAt > crashedAt).map((a) => a.endedAt),
    );
    console.log(
      `PostgreSQL failover under load: ${answers.length} calls, ${answers.filter((a) => a.status === 503).length} answered 503 ` +
        `during the switch; calls answer again ${firstBack - crashedAt} ms after the primary crashed ` +
        `(${firstBack - promotingAt} ms after the promotion began)`,
    );
    expect(
      answers.filter((a) => a.status !== 200 && !isUnavailableAnswer(a)).map((a) => `${a.status} ${a.body}`),
    ).toEqual([]);
    // No hang: a request is answered within the deadline plus some slack for a starved machine.
    expect(
      answers.filter(
        (a) =>
          a.endedAt - Math.max(a.startedAt, crashedAt) > DATABASE_TIMEOUT_MS * 3 + 2_000 && a.endedAt < promotingAt,
      ),
    ).toEqual([]);

    // Every answered call has exactly one row on the new primary (the promoted standby).
    const ids = answers.filter((a) => a.status === 200).map((a) => a.tag as string);
    const admin = new Client({ connectionString: `postgres://postgres@127.0.0.1:${pair.standbyPort}/test` });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ id: string }>(
        `SELECT request->>'id' AS id FROM mcp_events WHERE request->>'id' = ANY($1)`,
        [ids],
      );
      expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    } finally {
      await admin.end();
    }
    // The log says why once per change, not per request.
    const readOnly = server.logger.lines.filter(
      (l) => l.context === 'McpPostgresHostList' && /read-only/.test(l.message),
    );
    expect(server.logger.repeatsWithin(10_000).filter((l) => l.context === 'McpPostgresHostList')).toEqual([]);
    expect(readOnly.length).toBeLessThanOrEqual(3);
  });
});
