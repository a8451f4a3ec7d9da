import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpModule } from '../../src/mcp';
import { FixtureTools, OtherMountTools, fixtureAuth } from '../fixtures/fixture-tools';
import { MountConfig, MountConfigModule } from '../fixtures/mount-config';
import { HTTP_ADAPTERS, startApp, type RunningApp } from '../support/http-app';
import { callRequest, openSession, post, send, versionHeader, wireView } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * Two mounts in one app: mount "a" (forRoot) at /a/mcp serving FixtureTools, mount "b"
 * (forRootAsync, options from an injected config provider) at /b/mcp serving OtherMountTools.
 */
describe.each(HTTP_ADAPTERS)('two McpModule mounts in one app (forRoot + forRootAsync, PostgreSQL, %s)', (adapter) => {
  let db: TestDatabase;
  let server: RunningApp;
  let urlA: string;
  let urlB: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(
      db.url,
      {
        imports: [
          McpModule.forRoot({ mount: 'a', path: '/a/mcp', auth: fixtureAuth, providers: [FixtureTools] }),
          McpModule.forRootAsync({
            mount: 'b',
            path: '/b/mcp',
            imports: [MountConfigModule],
            inject: [MountConfig],
            useFactory: async (config: MountConfig) => {
              const loaded = await config.load();
              return {
                auth: (token: string) => loaded.tokens[token] ?? null,
                providers: [OtherMountTools],
                server: { name: loaded.serverName },
                advanced: { pageSize: loaded.pageSize, maxBodyBytes: loaded.maxBodyBytes },
              };
            },
          }),
        ],
        providers: [FixtureTools, OtherMountTools],
      },
      adapter,
    );
    urlA = `${server.baseUrl}/a/mcp`;
    urlB = `${server.baseUrl}/b/mcp`;
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await server?.close();
    await db?.drop();
  });

  async function sdkClient(url: string, token = 'token-alice') {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'multi-mount-e2e', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  it('each mount lists only its own tools (official SDK client)', async () => {
    const { client: a } = await sdkClient(urlA);
    const { client: b } = await sdkClient(urlB);
    expect((await a.listTools()).tools.map((t) => t.name).sort()).toEqual(['echo', 'fail', 'whoami']);
    expect((await b.listTools()).tools.map((t) => t.name)).toEqual(['other_only']);
    expect((await a.callTool({ name: 'echo', arguments: { text: 'on a' } })).content).toEqual([
      { type: 'text', text: 'on a' },
    ]);
    expect((await b.callTool({ name: 'other_only', arguments: {} })).content).toEqual([
      { type: 'text', text: 'other' },
    ]);
  });

  it('the forRootAsync mount uses the options its factory built from the injected config', async () => {
    const { client: a } = await sdkClient(urlA);
    const { client: b } = await sdkClient(urlB);
    expect(b.getServerVersion()?.name).toBe('mount-b-from-config');
    expect(a.getServerVersion()?.name).toBe('durable-mcp');
    const unauthorized = await post(urlB, { jsonrpc: '2.0', id: 1, method: 'ping' }, { token: 'token-mallory' });
    expect(unauthorized.status).toBe(401);
  });

  it("a mount's tools cannot be called on the other mount (-32602 unknown tool)", async () => {
    const onA = await openSession(urlA);
    const onB = await openSession(urlB);
    const echoOnB = await post(urlB, callRequest(1, 'echo', { text: 'x' }), {
      sessionId: onB.sessionId,
      headers: versionHeader(),
    });
    expect(echoOnB.status).toBe(200);
    expect(echoOnB.json).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32602 } });
    const whoamiOnB = await post(urlB, callRequest(2, 'whoami'), {
      sessionId: onB.sessionId,
      headers: versionHeader(),
    });
    expect(whoamiOnB.json).toMatchObject({ id: 2, error: { code: -32602 } });
    const otherOnA = await post(urlA, callRequest(3, 'other_only'), {
      sessionId: onA.sessionId,
      headers: versionHeader(),
    });
    expect(otherOnA.status).toBe(200);
    expect(otherOnA.json).toMatchObject({ jsonrpc: '2.0', id: 3, error: { code: -32602 } });
  });

  it('a session id from one mount is 404 on the other, and stays good on its own', async () => {
    const onA = await openSession(urlA);
    const onB = await openSession(urlB);
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const [{ n: before }] = await db.dataSource.query(`SELECT count(*)::int AS n FROM mcp_events`);

    const unknownId = 'no-such-session-0123456789abcdef';
    const aOnB = await post(urlB, list, { sessionId: onA.sessionId, headers: versionHeader() });
    const bOnA = await post(urlA, list, { sessionId: onB.sessionId, headers: versionHeader() });
    const deleteAOnB = await send(urlB, 'DELETE', { sessionId: onA.sessionId });
    expect(wireView(aOnB)).toMatchObject({ status: 404, sessionId: null });
    // Exactly the replies to an id that exists nowhere.
    expect(wireView(aOnB)).toEqual(
      wireView(await post(urlB, list, { sessionId: unknownId, headers: versionHeader() })),
    );
    expect(wireView(bOnA)).toEqual(
      wireView(await post(urlA, list, { sessionId: unknownId, headers: versionHeader() })),
    );
    expect(wireView(deleteAOnB)).toEqual(wireView(await send(urlB, 'DELETE', { sessionId: unknownId })));
    expect(deleteAOnB.status).toBe(404);
    const [{ n: after }] = await db.dataSource.query(`SELECT count(*)::int AS n FROM mcp_events`);
    expect(after).toBe(before);

    const stillA = await post(urlA, list, { sessionId: onA.sessionId, headers: versionHeader() });
    expect(stillA.status).toBe(200);
    expect(stillA.json.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(['echo', 'fail', 'whoami']);

    const rows = await db.dataSource.query(
      `SELECT session_id, mount FROM mcp_inbound_sessions WHERE session_id = ANY($1)`,
      [[onA.sessionId, onB.sessionId]],
    );
    expect(Object.fromEntries(rows.map((r: { session_id: string; mount: string }) => [r.session_id, r.mount]))).toEqual(
      { [onA.sessionId]: 'a', [onB.sessionId]: 'b' },
    );
    // The events of this test's two sessions carry the mount of their session.
    const events = await db.dataSource.query(
      `SELECT DISTINCT e.mount AS event_mount, s.mount AS session_mount FROM mcp_events e JOIN mcp_inbound_sessions s ON s.id = e.session_ref
        WHERE s.session_id = ANY($1) ORDER BY e.mount`,
      [[onA.sessionId, onB.sessionId]],
    );
    expect(events).toEqual([
      { event_mount: 'a', session_mount: 'a' },
      { event_mount: 'b', session_mount: 'b' },
    ]);
  });

  it('each mount enforces its own body limit (b: 1024 bytes from the config, a: the 4 MiB default)', async () => {
    const onA = await openSession(urlA);
    const onB = await openSession(urlB);
    const text = 'q'.repeat(2048);
    const onMountA = await post(urlA, callRequest(1, 'echo', { text }), {
      sessionId: onA.sessionId,
      headers: versionHeader(),
    });
    expect(onMountA.status).toBe(200);
    expect(onMountA.json.result.content).toEqual([{ type: 'text', text }]);
    const onMountB = await post(urlB, callRequest(2, 'other_only', { padding: text }), {
      sessionId: onB.sessionId,
      headers: versionHeader(),
    });
    expect(onMountB.status).toBe(413);
  });

  it('405 holds on both paths, and other paths are not MCP endpoints', async () => {
    for (const url of [urlA, urlB]) {
      expect((await send(url, 'GET', { token: null })).status).toBe(405);
    }
    const elsewhere = await post(`${server.baseUrl}/mcp`, { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(elsewhere.status).toBe(404);
  });
});
