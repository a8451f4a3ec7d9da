import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { MCP_SESSION_NOTIFIER, type McpSessionNotifier } from '../../src/mcp/interfaces/mcp-session-notifier.interface';
import { McpModule } from '../../src/mcp';
import { McpStreamRegistry } from '../../src/mcp/server/sessions/mcp-stream-registry';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * The official SDK 1.x client against a mount served by @nestjs/platform-fastify: the handshake,
 * a tool call, and the session's GET event stream the client opens on its own after initialize.
 */
describe('official SDK 1.x client against McpModule on Fastify (2025-11-25, PostgreSQL)', () => {
  let db: TestDatabase;
  let server: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(
      db.url,
      { imports: [McpModule.forRoot({ auth: fixtureAuth })], providers: [FixtureTools] },
      'fastify',
    );
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  it('initializes, calls a tool, and receives a session notification on its GET stream', async () => {
    expect(server.app.getHttpAdapter().getType()).toBe('fastify');
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
    });
    const client = new Client({ name: 'fastify-e2e', version: '1.0.0' });
    const listChanged = new Promise<unknown>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, (notification) => resolve(notification)),
    );
    await client.connect(transport);
    try {
      const sessionId = transport.sessionId as string;
      expect(sessionId).toMatch(/^[\x21-\x7e]{20,}$/);
      expect(client.getServerVersion()?.name).toBe('durable-mcp');

      const result = await client.callTool({ name: 'echo', arguments: { text: 'over fastify' } });
      expect(result.content).toEqual([{ type: 'text', text: 'over fastify' }]);
      const whoami = await client.callTool({ name: 'whoami', arguments: {} });
      expect(whoami.structuredContent).toEqual({ principal: 'alice' });

      // The client opened the session's GET stream after `notifications/initialized`; once the
      // server holds it, a session notification travels on it.
      const registry = server.app.get(McpStreamRegistry, { strict: false });
      await pollUntil('the GET stream of the session', () => (registry.has(sessionId) ? true : undefined));
      const notifier = server.app.get<McpSessionNotifier>(MCP_SESSION_NOTIFIER, { strict: false });
      await notifier.notifySession(sessionId, { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      expect(await listChanged).toMatchObject({ method: 'notifications/tools/list_changed' });

      const rows: { method: string | null; status: number }[] = await db.dataSource.query(
        `SELECT e.method, e.status FROM mcp_events e JOIN mcp_inbound_sessions s ON s.id = e.session_ref WHERE s.session_id = $1 AND e.kind = 'request' ORDER BY e.created_at`,
        [sessionId],
      );
      expect(rows).toEqual([
        { method: 'initialize', status: 200 },
        { method: 'tools/call', status: 200 },
        { method: 'tools/call', status: 200 },
      ]);
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
    expect(
      (await db.dataSource.query(`SELECT terminated_at FROM mcp_inbound_sessions`))[0].terminated_at,
    ).not.toBeNull();
  });
});
