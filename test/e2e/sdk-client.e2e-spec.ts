import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

describe('official SDK 1.x client against McpModule (2025-11-25, PostgreSQL)', () => {
  let db: TestDatabase;
  let server: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, { imports: [McpModule.forRoot({ auth: fixtureAuth })], providers: [FixtureTools] });
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  function connect(token = 'token-alice') {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    return { client, transport };
  }

  it('initializes, lists and calls tools, terminates, and the dead session is refused', async () => {
    const { client, transport } = connect();
    await client.connect(transport);
    const sessionId = transport.sessionId as string;
    expect(sessionId).toMatch(/^[\x21-\x7e]{20,}$/);
    expect(client.getServerVersion()?.name).toBe('durable-mcp');

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['echo', 'fail', 'whoami']);
    expect(tools.find((t) => t.name === 'echo')?.inputSchema).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });

    const echoed = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'hello' }]);

    const failed = await client.callTool({ name: 'fail', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(failed.content).toEqual([{ type: 'text', text: 'boom on purpose' }]);

    const who = await client.callTool({ name: 'whoami', arguments: {} });
    expect(who.structuredContent).toEqual({ principal: 'alice' });

    await transport.terminateSession();
    const [row] = await db.dataSource.query(`SELECT terminated_at FROM mcp_inbound_sessions WHERE session_id = $1`, [
      sessionId,
    ]);
    expect(row.terminated_at).not.toBeNull();

    // The SDK dropped its session id with the DELETE: the server wants initialize first.
    const again = await client.callTool({ name: 'echo', arguments: { text: 'again' } }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(StreamableHTTPError);
    expect(again).toMatchObject({
      code: 400,
      message: expect.stringContaining('the Mcp-Session-Id header is required'),
    });
    const stale = await fetch(`${server.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: 'Bearer token-alice',
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(stale.status).toBe(404);
    await client.close();
  });
});
