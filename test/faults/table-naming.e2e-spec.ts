import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MCP_ENTITIES, McpClientModule, McpClientService, McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startSdkHttpServer, type SdkHttpServer } from '../fixtures/http/sdk-http-server';
import { callRequest, openSession, post, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** How a host may name the tables: TypeORM's `entityPrefix` or a PostgreSQL `schema`. */
type Naming = { entityPrefix: string } | { schema: string };

/**
 * The hand-built SQL of the stores (the multi-row event INSERT, the batched session SELECT, the
 * outbound session upsert) must land in the tables the host's DataSource names, not in the
 * default `mcp_*` tables.
 */
describe.each<[string, Naming, (table: string) => string]>([
  ['entityPrefix app_', { entityPrefix: 'app_' }, (table) => `"app_${table}"`],
  ['schema mcp', { schema: 'mcp' }, (table) => `"mcp"."${table}"`],
])('hand-built SQL honours the host TypeORM naming (%s)', (_label, naming, tableOf) => {
  let db: TestDatabase;
  let app: INestApplication;
  let baseUrl: string;
  let sdk: SdkHttpServer;

  beforeAll(async () => {
    // With a prefix the default tables would hold the same index names: start from an empty database.
    db = await createTestDatabase('schema' in naming);
    if ('schema' in naming) await db.dataSource.query(`CREATE SCHEMA "${naming.schema}"`);
    sdk = await startSdkHttpServer({ enableJsonResponse: true, requiredToken: 'sdk-secret' });
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES, synchronize: true, ...naming }),
        McpModule.forRoot({ auth: fixtureAuth }),
        McpClientModule.forRoot({ servers: { sdk: { url: sdk.url, bearerToken: 'sdk-secret' } } }),
      ],
      providers: [FixtureTools],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error', 'warn'] });
    await app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });

  afterAll(async () => {
    await app?.close();
    await sdk?.close();
    await db?.drop();
  });

  it('initialize, tools/call and a client call write their rows to the named tables', async () => {
    const { sessionId } = await openSession(`${baseUrl}/mcp`);
    const called = await post(`${baseUrl}/mcp`, callRequest(1, 'echo', { text: 'named' }), {
      sessionId,
      headers: versionHeader(),
    });
    expect(called.status).toBe(200);
    expect(called.json.result.content).toEqual([{ type: 'text', text: 'named' }]);
    // A second call finds the session again through the batched SELECT.
    const again = await post(`${baseUrl}/mcp`, callRequest(2, 'whoami'), { sessionId, headers: versionHeader() });
    expect(again.json.result.structuredContent).toEqual({ principal: 'alice' });

    const client = app.get(McpClientService);
    expect(await client.callTool('sdk', 'echo', { text: 'out' })).toMatchObject({
      content: [{ type: 'text', text: 'out' }],
    });
    await client.callTool('sdk', 'echo', { text: 'out again' });

    const sessions = await db.dataSource.query(
      `SELECT session_id, principal_key FROM ${tableOf('mcp_inbound_sessions')}`,
    );
    expect(sessions).toEqual([{ session_id: sessionId, principal_key: 'alice' }]);
    const inbound = await db.dataSource.query(
      `SELECT method, status FROM ${tableOf('mcp_events')} WHERE direction = 'inbound' AND method = 'tools/call' ORDER BY created_at`,
    );
    expect(inbound).toEqual([
      { method: 'tools/call', status: 200 },
      { method: 'tools/call', status: 200 },
    ]);
    const outbound = await db.dataSource.query(
      `SELECT count(*)::int AS n FROM ${tableOf('mcp_events')} WHERE direction = 'outbound' AND server = 'sdk' AND method = 'tools/call'`,
    );
    expect(outbound).toEqual([{ n: 2 }]);
    // The upsert ran twice (open, then continue): still one row, with the remote session id.
    const remote = await db.dataSource.query(
      `SELECT server, remote_session_id FROM ${tableOf('mcp_outbound_sessions')}`,
    );
    expect(remote).toHaveLength(1);
    expect(remote[0].server).toBe('sdk');
    expect(remote[0].remote_session_id).toEqual(expect.any(String));

    if ('schema' in naming) {
      // The default tables exist (migrated) and stay empty.
      for (const table of ['mcp_inbound_sessions', 'mcp_events', 'mcp_outbound_sessions']) {
        expect(await db.dataSource.query(`SELECT count(*)::int AS n FROM public."${table}"`)).toEqual([{ n: 0 }]);
      }
    } else {
      const defaults = await db.dataSource.query(
        `SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'mcp\\_%'`,
      );
      expect(defaults).toEqual([]);
    }
  });
});
