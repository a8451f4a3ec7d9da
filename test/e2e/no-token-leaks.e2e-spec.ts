import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MCP_ENTITIES, McpClientModule, McpClientService, McpModule } from '../../src/mcp';
import { McpTransportError } from '../../src/mcp/errors';
import { DocumentedTools } from '../fixtures/documented/documented-tools';
import { FixtureTools } from '../fixtures/fixture-tools';
import { initializeRequest, post } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { CapturingLogger } from '../support/capturing-logger';

const VALID_TOKEN = 'srv-valid-token-7f3a91c2d4e5';
const INVALID_TOKEN = 'srv-invalid-token-9c2e07b1a6f8';
const CLIENT_WRONG_TOKEN = 'cli-wrong-token-55aa13e9b0c7';
const TOKENS = [VALID_TOKEN, INVALID_TOKEN, CLIENT_WRONG_TOKEN];

/**
 * Bearer tokens never reach a log line or a row: a server that accepts and refuses tokens and a
 * client that sends a valid and a wrong `bearerToken`, both logging through a capturing logger
 * at every level, on both revisions.
 */
describe('No bearer token in logs or rows', () => {
  let db: TestDatabase;
  const logger = new CapturingLogger();
  const apps: INestApplication[] = [];

  async function boot(metadata: ModuleMetadata): Promise<{ app: INestApplication; baseUrl: string }> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES }),
        ...(metadata.imports ?? []),
      ],
      providers: metadata.providers ?? [],
    }).compile();
    const app = moduleRef.createNestApplication({ logger });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    return { app, baseUrl: `http://127.0.0.1:${port}` };
  }

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    for (const app of apps.reverse()) await app.close().catch(() => undefined);
    await db?.drop();
  });

  it('a session of calls with valid and invalid tokens on both sides leaves no token in any log line or row', async () => {
    const server = await boot({
      imports: [
        McpModule.forRoot({
          auth: (token: string) => (token === VALID_TOKEN ? { key: 'svc', label: 'Service' } : null),
          providers: [FixtureTools, DocumentedTools],
          stateless: { requestStateSecret: 'no-token-leaks-suite-secret-01' },
        }),
      ],
      providers: [FixtureTools, DocumentedTools],
    });
    const url = `${server.baseUrl}/mcp`;
    const { app: clientApp } = await boot({
      imports: [
        McpClientModule.forRoot({
          servers: {
            good: { url, bearerToken: VALID_TOKEN, version: '2025-11-25', retry: { retries: 0 } },
            goodStateless: { url, bearerToken: VALID_TOKEN, version: '2026-07-28', retry: { retries: 0 } },
            wrong: { url, bearerToken: CLIENT_WRONG_TOKEN, version: '2025-11-25', retry: { retries: 0 } },
            wrongStateless: { url, bearerToken: CLIENT_WRONG_TOKEN, version: '2026-07-28', retry: { retries: 0 } },
          },
        }),
      ],
    });
    const client = clientApp.get(McpClientService);

    expect(await client.callTool('good', 'echo', { text: 'ok' })).toEqual({ content: [{ type: 'text', text: 'ok' }] });
    expect((await client.callTool('good', 'fail', {})).isError).toBe(true);
    expect((await client.callTool('goodStateless', 'echo', { text: 'ok' })).content).toEqual([
      { type: 'text', text: 'ok' },
    ]);
    await expect(client.callTool('good', 'no_such_tool', {})).rejects.toMatchObject({ code: -32602 });
    await expect(client.callTool('wrong', 'echo', { text: 'x' })).rejects.toBeInstanceOf(McpTransportError);
    await expect(client.callTool('wrongStateless', 'echo', { text: 'x' })).rejects.toMatchObject({ status: 401 });
    expect((await post(url, initializeRequest(), { token: INVALID_TOKEN })).status).toBe(401);
    expect((await post(url, initializeRequest(), { token: VALID_TOKEN })).status).toBe(200);
    expect((await post(url, 'not json', { token: VALID_TOKEN })).status).toBe(400);

    expect(logger.lines.some((line) => line.includes('Mapped {/mcp, POST} route'))).toBe(true);
    const leakingLines = logger.lines.filter((line) => TOKENS.some((token) => line.includes(token)));
    expect(leakingLines).toEqual([]);
    // Every exchange above wrote its row before its reply; a refused tools/call or probe is sent once per queue attempt (3).
    const events = await db.dataSource.query(
      `SELECT direction, server, method FROM mcp_events ORDER BY direction, server, method`,
    );
    expect(
      events.map(
        (row: { direction: string; server: string | null; method: string }) =>
          `${row.direction} ${row.server ?? '-'} ${row.method}`,
      ),
    ).toEqual([
      'inbound - initialize',
      'inbound - initialize',
      'inbound - notifications/initialized',
      'inbound - server/discover',
      'inbound - tools/call',
      'inbound - tools/call',
      'inbound - tools/call',
      'inbound - tools/call',
      'inbound - tools/list',
      'outbound good tools/call',
      'outbound good tools/call',
      'outbound good tools/call',
      'outbound goodStateless server/discover',
      'outbound goodStateless tools/call',
      'outbound goodStateless tools/list',
      'outbound wrong tools/call',
      'outbound wrong tools/call',
      'outbound wrong tools/call',
      'outbound wrongStateless server/discover',
      'outbound wrongStateless server/discover',
      'outbound wrongStateless server/discover',
    ]);
    for (const token of TOKENS) {
      const pattern = `%${token}%`;
      const [{ n }] = await db.dataSource.query(
        `SELECT count(*)::int AS n FROM mcp_events WHERE request::text LIKE $1 OR response::text LIKE $1 OR coalesce(note, '') LIKE $1`,
        [pattern],
      );
      expect({ token, rows: n }).toEqual({ token, rows: 0 });
      const [{ sessions }] = await db.dataSource.query(
        `SELECT (SELECT count(*)::int FROM mcp_inbound_sessions s WHERE s::text LIKE $1) + (SELECT count(*)::int FROM mcp_outbound_sessions o WHERE o::text LIKE $1) AS sessions`,
        [pattern],
      );
      expect({ token, sessions }).toEqual({ token, sessions: 0 });
    }
  });
});
