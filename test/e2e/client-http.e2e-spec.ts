import { McpClientModule, McpModule, McpClientService, type McpClientOptions } from '../../src/mcp';
import { McpCapabilityError } from '../../src/mcp/errors';
import { startSdkHttpServer, type SdkHttpServer } from '../fixtures/http/sdk-http-server';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

describe('McpClientService over Streamable HTTP (inline queue)', () => {
  let db: TestDatabase;
  let target: RunningApp;
  let sdk: SdkHttpServer;
  let options: McpClientOptions;

  beforeAll(async () => {
    db = await createTestDatabase();
    target = await startApp(db.url, { imports: [McpModule.forRoot({ auth: fixtureAuth })], providers: [FixtureTools] });
    sdk = await startSdkHttpServer({ enableJsonResponse: false, requiredToken: 'sdk-secret' });
    options = {
      servers: {
        // Pinned: these cases are about continuing a 2025 session; the stateless path has its own suites.
        nest: { url: `${target.baseUrl}/mcp`, bearerToken: 'token-alice', version: '2025-11-25' },
        sdk: { url: sdk.url, bearerToken: 'sdk-secret' },
      },
      handlers: {
        sampling: (params) => ({
          role: 'assistant',
          content: { type: 'text', text: `sampled ${JSON.stringify(params.maxTokens)}` },
          model: 'test-model',
        }),
      },
    };
  });

  afterAll(async () => {
    await sdk?.close();
    await target?.close();
    await db?.drop();
  });

  /** Boots a client-only app on the shared database. */
  async function clientApp(): Promise<{ app: RunningApp; client: McpClientService }> {
    const app = await startApp(db.url, { imports: [McpClientModule.forRoot(options)] });
    return { app, client: app.app.get(McpClientService) };
  }

  it('continues the persisted remote session from a second app instance instead of re-initializing', async () => {
    const first = await clientApp();
    try {
      expect(await first.client.callTool('nest', 'echo', { text: 'one' })).toEqual({
        content: [{ type: 'text', text: 'one' }],
      });
    } finally {
      await first.app.close();
    }
    const [before] = await db.dataSource.query(`SELECT * FROM mcp_outbound_sessions WHERE server = 'nest'`);
    expect(before.remote_session_id).toMatch(/^[\x21-\x7e]+$/);
    expect(before.server_info).toMatchObject({ name: 'durable-mcp' });

    const second = await clientApp();
    try {
      expect((await second.client.callTool('nest', 'whoami', {})).structuredContent).toEqual({ principal: 'alice' });
    } finally {
      await second.app.close();
    }
    const [after] = await db.dataSource.query(`SELECT * FROM mcp_outbound_sessions WHERE server = 'nest'`);
    expect(after.remote_session_id).toBe(before.remote_session_id);
    const sessions = await db.dataSource.query(`SELECT session_id FROM mcp_inbound_sessions`);
    expect(sessions.map((s: { session_id: string }) => s.session_id)).toEqual([before.remote_session_id]);
    const events = await db.dataSource.query(
      `SELECT method, status, request FROM mcp_events WHERE direction = 'outbound' AND server = 'nest' AND method = 'tools/call' ORDER BY created_at`,
    );
    expect(events.map((e: { request: { params: { name: string } } }) => e.request.params.name)).toEqual([
      'echo',
      'whoami',
    ]);
    expect(events.every((e: { status: number }) => e.status === 200)).toBe(true);
  });

  it('calls an official SDK server, answers its sampling request, and never stores the bearer token', async () => {
    const { app, client } = await clientApp();
    try {
      const sampled = await client.callTool('sdk', 'sample', {});
      expect(JSON.stringify(sampled.content)).toContain('sampled 16');
      expect(sdk.toolRuns).toContain('sample');
      await client.setLogLevel('sdk', 'debug');
      await expect(client.listPrompts('sdk')).rejects.toBeInstanceOf(McpCapabilityError);
    } finally {
      await app.close();
    }
    const rows = await db.dataSource.query(`SELECT * FROM mcp_events WHERE server = 'sdk'`);
    // One outbound row per exchange: the revision probe (refused by this 2025 server), the call
    // (whose own handshake opened the session and learned the capabilities), and setLevel. The
    // refused prompts/list was never sent.
    expect(rows.map((r: { direction: string; method: string }) => `${r.direction} ${r.method}`).sort()).toEqual([
      'outbound logging/setLevel',
      'outbound server/discover',
      'outbound tools/call',
    ]);
    expect(JSON.stringify(rows)).not.toContain('sdk-secret');
  });

  it('records a failed exchange when the server is unreachable', async () => {
    const dead = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth })],
      providers: [FixtureTools],
    });
    const url = `${dead.baseUrl}/mcp`;
    await dead.close();
    const app = await startApp(db.url, {
      imports: [McpClientModule.forRoot({ servers: { gone: { url, retry: { retries: 0 } } }, queue: { attempts: 1 } })],
    });
    try {
      const client = app.app.get(McpClientService);
      await expect(client.callTool('gone', 'echo', { text: 'x' })).rejects.toMatchObject({
        name: 'McpTransportError',
        delivered: false,
      });
    } finally {
      await app.close();
    }
    const rows = await db.dataSource.query(`SELECT * FROM mcp_events WHERE server = 'gone'`);
    // The first exchange (the revision probe) is refused and the call stops there: one row.
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ direction: 'outbound', method: 'server/discover', response: null });
    expect(rows[0].note).toContain('McpTransportError');
  });
});
