import { Socket } from 'node:net';
import { McpClientModule, McpModule, McpClientService } from '../../src/mcp';
import {
  McpCapabilityError,
  McpServerError,
  McpTimeoutError,
  McpAmbiguousToolError,
  McpToolNotFoundError,
  McpUnknownServerError,
} from '../../src/mcp/errors';
import { ClientFixtureTools } from '../fixtures/client/client-tools';
import { FixtureTools, OtherMountTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { TEST_REDIS_ADDRESS } from '../support/redis';

/** True for a `Socket.connect` call aimed at the configured Redis (by its port, in any call form). */
function toRedis(args: unknown[]): boolean {
  const [first, second] = args;
  if (typeof first === 'number' || typeof first === 'string') return Number(first) === TEST_REDIS_ADDRESS.port;
  if (Array.isArray(first)) return toRedis(first);
  const options = first as { port?: unknown; path?: unknown } | null;
  return (
    (options !== null && typeof options === 'object' && Number(options.port) === TEST_REDIS_ADDRESS.port) ||
    (second !== undefined && typeof second !== 'function' && toRedis([second]))
  );
}

describe('McpClientService, inline queue, in-process toolset transport', () => {
  let db: TestDatabase;
  let app: RunningApp;
  let client: McpClientService;
  let connectSpy: jest.SpyInstance;

  beforeAll(async () => {
    connectSpy = jest.spyOn(Socket.prototype, 'connect').mockName('observe');
    db = await createTestDatabase();
    app = await startApp(db.url, {
      imports: [
        McpModule.forRoot({ auth: fixtureAuth }),
        McpClientModule.forRoot({
          servers: {
            local: { transport: 'toolset', principal: 'alice' },
            second: { transport: 'toolset', mount: 'second', principal: { key: 'bob', label: 'Bob' } },
          },
        }),
        McpModule.forRoot({ auth: fixtureAuth, mount: 'second', path: '/second', providers: [OtherMountTools] }),
      ],
      providers: [FixtureTools, OtherMountTools, ClientFixtureTools],
    });
    client = app.app.get(McpClientService);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
    // Boot, every test and the close included: the inline mode never connected to Redis.
    const redisConnects = connectSpy.mock.calls.filter(toRedis);
    connectSpy.mockRestore();
    expect(redisConnects).toEqual([]);
  });

  it('lists and calls tools, returning isError results as results', async () => {
    expect(client.mode).toBe('inline');
    const tools = await client.listTools('local');
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'fail', 'whoami', 'where', 'hang']));
    expect(await client.callTool('local', 'echo', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] });
    const failed = await client.callTool('local', 'fail', {});
    expect(failed.isError).toBe(true);
    expect((await client.callTool('local', 'whoami')).structuredContent).toEqual({ principal: 'alice' });
    expect(await client.callTool('second', 'other_only')).toEqual({ content: [{ type: 'text', text: 'other' }] });
  });

  it('maps JSON-RPC errors to McpServerError and refuses undeclared capabilities', async () => {
    const unknown = client.callTool('local', 'no_such_tool', {});
    await expect(unknown).rejects.toBeInstanceOf(McpServerError);
    await expect(unknown).rejects.toMatchObject({ code: -32602 });
    await expect(client.listPrompts('local')).rejects.toBeInstanceOf(McpCapabilityError);
    await expect(client.readResource('local', 'file:///x')).rejects.toMatchObject({
      capability: 'resources',
      method: 'resources/read',
    });
    await expect(client.callTool('nowhere', 'echo', {})).rejects.toBeInstanceOf(McpUnknownServerError);
  });

  it('routes a tool name to the one server that offers it', async () => {
    expect(await client.callTool('echo', { text: 'routed' })).toEqual({ content: [{ type: 'text', text: 'routed' }] });
    const ambiguous = client.callTool('other_only', {});
    await expect(ambiguous).rejects.toBeInstanceOf(McpAmbiguousToolError);
    await expect(ambiguous).rejects.toMatchObject({ servers: ['local', 'second'] });
    await expect(client.callTool('missing_tool', {})).rejects.toBeInstanceOf(McpToolNotFoundError);
    const all = await client.listAllTools();
    expect(all.filter((t) => t.tool.name === 'other_only').map((t) => t.server)).toEqual(['local', 'second']);
  });

  it('enqueues without waiting and fetches the outcome by id', async () => {
    const id = await client.callTool('local', 'echo', { text: 'later' }, { wait: false });
    expect(typeof id).toBe('string');
    expect(await client.waitForCall(id)).toEqual({ content: [{ type: 'text', text: 'later' }] });
    expect(await client.getCallResult(id)).toMatchObject({
      id,
      state: 'completed',
      result: { content: [{ type: 'text', text: 'later' }] },
    });
    const failing = await client.enqueueToolCall('local', 'no_such_tool');
    await expect(client.waitForCall(failing)).rejects.toBeInstanceOf(McpServerError);
    expect((await client.getCallResult(failing)).error).toBeInstanceOf(McpServerError);
  });

  it('writes an outbound event row per exchange, failed ones included, and persists the session', async () => {
    // Arguments unique to this test pick its own rows out of the shared table.
    const mark = `rows-${Date.now()}-${Math.random()}`;
    expect(await client.callTool('local', 'echo', { text: mark })).toEqual({ content: [{ type: 'text', text: mark }] });
    expect(await client.callTool('local', 'fail', { mark })).toMatchObject({ isError: true });
    await expect(client.callTool('local', 'no_such_tool', { mark })).rejects.toBeInstanceOf(McpServerError);
    await expect(client.callTool('local', 'hang', { mark }, { timeoutMs: 200 })).rejects.toBeInstanceOf(
      McpTimeoutError,
    );
    const rows = await db.dataSource.query(
      `SELECT * FROM mcp_events WHERE direction = 'outbound' AND server = 'local' AND method = 'tools/call'
         AND (request->'params'->'arguments'->>'text' = $1 OR request->'params'->'arguments'->>'mark' = $1) ORDER BY created_at`,
      [mark],
    );
    expect(rows.map((r: { request: { params: { name: string } } }) => r.request.params.name)).toEqual([
      'echo',
      'fail',
      'no_such_tool',
      'hang',
    ]);
    const [echo, failed, unknown, timedOut] = rows;
    expect(echo).toMatchObject({
      kind: 'request',
      principal_key: null,
      error_code: null,
      is_error: false,
      response: { result: { content: [{ type: 'text', text: mark }] } },
    });
    expect(failed).toMatchObject({ is_error: true });
    expect(unknown).toMatchObject({ error_code: -32602 });
    expect(timedOut).toMatchObject({ response: null });
    expect(timedOut.note).toContain('McpTimeoutError');
    const [session] = await db.dataSource.query(
      `SELECT * FROM mcp_outbound_sessions WHERE server = 'local' AND scope_key = ''`,
    );
    expect(session).toMatchObject({
      protocol_version: '2025-11-25',
      server_capabilities: { tools: expect.any(Object) },
      server_info: { name: 'durable-mcp' },
    });
    expect(echo.session_ref).toBe(session.id);
  });

  it('opens no Redis connection for its calls', async () => {
    expect(await client.callTool('local', 'echo', { text: 'no redis' })).toEqual({
      content: [{ type: 'text', text: 'no redis' }],
    });
    expect((await client.listTools('local')).map((tool) => tool.name)).toContain('echo');
    // The boot and these calls; afterAll checks the same once the app is closed.
    expect(connectSpy.mock.calls.filter(toRedis)).toEqual([]);
  });
});
