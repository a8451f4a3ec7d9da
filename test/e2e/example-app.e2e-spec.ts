import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { freeLoopbackPort, spawnReady, TS_REGISTER, type ReadyChild } from '../support/child-process';
import { HTTP_ADAPTERS } from '../support/http-app';
import { pollUntil } from '../support/polling';

jest.setTimeout(90_000);

const ROOT = join(__dirname, '..', '..');

/** The budget of the throttled tool (`add`) the app is started with, per principal and minute (THROTTLE_TTL_MS defaults to 60 s). */
const THROTTLE_LIMIT = 2;

/**
 * The example app as a user starts it (`src/main.ts`), in its own process whose working
 * directory is a temp dir, so its ./data lands there and the Jest process never changes its own;
 * once on each HTTP adapter (`HTTP_ADAPTER`).
 */
describe.each(HTTP_ADAPTERS)('the example app on its embedded SQLite default (HTTP_ADAPTER=%s)', (adapter) => {
  const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-example-'));
  let app: ReadyChild | undefined;
  let url: URL;

  beforeAll(async () => {
    const port = await freeLoopbackPort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      MCP_TOKENS: 'alice=token-a,bob=token-b',
      MCP_CONSOLE_ADMINS: 'alice',
      HOST: '127.0.0.1',
      PORT: String(port),
      HTTP_ADAPTER: adapter,
      THROTTLE_LIMIT: String(THROTTLE_LIMIT),
      TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
    };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    app = await spawnReady(
      process.execPath,
      ['-r', TS_REGISTER, join(ROOT, 'src', 'main.ts')],
      { cwd: workdir, env },
      /MCP endpoint: (\S+) .*HTTP on (\w+)/,
    );
    url = new URL(app.ready[1]);
    expect(app.ready[2]).toBe(adapter);
    expect(url.port).toBe(String(port));
  });

  afterAll(async () => {
    await app?.stop();
    rmSync(workdir, { recursive: true, force: true });
  });

  it('runs slow_report as a task on SQLite: created at once, status messages while it runs, the report as its result', async () => {
    const transport = new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { Authorization: 'Bearer token-b' } },
    });
    const client = new Client(
      { name: 'example-e2e-tasks', version: '1.0.0' },
      { capabilities: { tasks: { list: {}, cancel: {} } } },
    );
    await client.connect(transport);
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'slow_report', arguments: { steps: 2 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    expect(task).toMatchObject({ status: 'working', ttl: 60_000, pollInterval: 1000 });
    expect(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).toEqual({
      content: [{ type: 'text', text: 'Report ready after 2 steps for bob' }],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } },
    });
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({
      status: 'completed',
      statusMessage: 'step 2 of 2',
    });
    await client.close();
  });

  it('serves echo, add, convert_temperature (Zod), fail and whoami to a token from MCP_TOKENS and logs them in ./data', async () => {
    const transport = new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { Authorization: 'Bearer token-b' } },
    });
    const client = new Client({ name: 'example-e2e', version: '1.0.0' });
    await client.connect(transport);

    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'add',
      'convert_temperature',
      'echo',
      'fail',
      'relay_echo',
      'slow_report',
      'whoami',
    ]);
    // relay_echo calls echo through McpClientService: an inline job here, since REDIS_URL is unset.
    expect((await client.callTool({ name: 'relay_echo', arguments: { text: 'round trip' } })).content).toEqual([
      { type: 'text', text: 'bob via relay: round trip' },
    ]);
    expect((await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).content).toEqual([
      { type: 'text', text: 'hi' },
    ]);
    expect((await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })).structuredContent).toEqual({ sum: 5 });
    expect(
      (await client.callTool({ name: 'convert_temperature', arguments: { value: 100, to: 'fahrenheit' } }))
        .structuredContent,
    ).toEqual({ value: 212, unit: 'fahrenheit' });
    const failed = await client.callTool({ name: 'fail', arguments: { reason: 'nope' } });
    expect(failed).toMatchObject({ isError: true, content: [{ type: 'text', text: 'nope' }] });
    expect((await client.callTool({ name: 'whoami', arguments: {} })).structuredContent).toMatchObject({
      principal: 'bob',
    });
    await client.close();

    const db = new DataSource({ type: 'better-sqlite3', database: join(workdir, 'data', 'durable-mcp.sqlite') });
    await db.initialize();
    try {
      const [session] = await db.query(`SELECT principal_key FROM mcp_inbound_sessions`);
      expect(session.principal_key).toBe('bob');
      const events: { method: string; is_error: number }[] = await db.query(
        `SELECT method, is_error FROM mcp_events WHERE kind = 'request' ORDER BY created_at`,
      );
      expect(events.map((e) => e.method)).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'tools/call']));
      expect(events.filter((e) => e.is_error === 1)).toHaveLength(1);
      const outbound: { server: string; method: string }[] = await db.query(
        `SELECT server, method FROM mcp_events WHERE direction = 'outbound'`,
      );
      expect(outbound).toContainEqual({ server: 'self', method: 'tools/call' });
      const [remote] = await db.query(`SELECT server, scope_key FROM mcp_outbound_sessions`);
      expect(remote).toMatchObject({ server: 'self' });
      // Every table of MCP_ENTITIES, the registry switches (none made by this app) and the tasks included.
      const tables: { name: string }[] = await db.query(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'mcp\\_%' ESCAPE '\\' ORDER BY name`,
      );
      expect(tables.map((t) => t.name)).toEqual([
        'mcp_events',
        'mcp_handler_switches',
        'mcp_inbound_sessions',
        'mcp_oauth_authorizations',
        'mcp_oauth_clients',
        'mcp_oauth_grants',
        'mcp_oauth_provider_records',
        'mcp_outbound_sessions',
        'mcp_resource_subscriptions',
        'mcp_tasks',
      ]);
      expect(await db.query(`SELECT count(*) AS n FROM mcp_handler_switches`)).toEqual([{ n: 0 }]);
      expect(await db.query(`SELECT tool_name, status FROM mcp_tasks`)).toEqual([
        { tool_name: 'slow_report', status: 'completed' },
      ]);
    } finally {
      await db.destroy();
    }
  });

  it('throttles add per principal: past THROTTLE_LIMIT calls a caller gets the throttler error, others keep their budget', async () => {
    const connect = async (token: string) => {
      const client = new Client({ name: 'example-e2e-throttle', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
      );
      return client;
    };
    const alice = await connect('token-a');
    const bob = await connect('token-b');
    try {
      for (let call = 0; call < THROTTLE_LIMIT; call++) {
        expect(await alice.callTool({ name: 'add', arguments: { a: call, b: 1 } })).toEqual({
          content: [{ type: 'text', text: JSON.stringify({ sum: call + 1 }) }],
          structuredContent: { sum: call + 1 },
        });
      }
      expect(await alice.callTool({ name: 'add', arguments: { a: 1, b: 1 } })).toEqual({
        isError: true,
        content: [{ type: 'text', text: 'ThrottlerException: Too Many Requests' }],
      });
      // Listing does not spend the budget, and the refused tool stays listed.
      expect((await alice.listTools()).tools.map((t) => t.name)).toContain('add');
      expect((await alice.callTool({ name: 'echo', arguments: { text: 'still here' } })).content).toEqual([
        { type: 'text', text: 'still here' },
      ]);
      // bob's budget is his own (the first test spent at most one of his calls).
      expect((await bob.callTool({ name: 'add', arguments: { a: 2, b: 2 } })).structuredContent).toEqual({ sum: 4 });
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  it("admits to the console only the administrators of MCP_CONSOLE_ADMINS: another principal's MCP token is refused", async () => {
    await pollUntil('the console line at start-up', () =>
      /Audit console: \S+ for the console administrators alice /.test(app!.output()) ? true : undefined,
    );
    // bob's call is in the audit trail, and only an administrator reads it.
    const client = new Client({ name: 'example-e2e-console', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: 'Bearer token-b' } } }),
    );
    await client.callTool({ name: 'echo', arguments: { text: 'for the administrators only' } });
    await client.close();
    const admin = await fetch(new URL('/mcp-console/events?principal=bob', url), {
      headers: { Authorization: 'Bearer token-a' },
    });
    expect(admin.status).toBe(200);
    const trail = await admin.text();
    expect(trail).toMatch(/<tr data-event="/);
    expect(trail).toContain('for the administrators only');
    const basic = await fetch(new URL('/mcp-console/sessions', url), {
      headers: { Authorization: `Basic ${Buffer.from('ops:token-a').toString('base64')}` },
    });
    expect(basic.status).toBe(200);

    const bob = await fetch(new URL('/mcp-console/events?principal=bob', url), {
      headers: { Authorization: 'Bearer token-b' },
    });
    expect(bob.status).toBe(403);
    const refusal = await bob.text();
    expect(refusal).toContain('not a console administrator');
    expect(refusal).not.toMatch(/data-event|for the administrators only/);
    for (const headers of [{}, { Authorization: 'Bearer nope' }] as Record<string, string>[]) {
      const stranger = await fetch(new URL('/mcp-console', url), { headers });
      expect(stranger.status).toBe(401);
      expect(stranger.headers.get('www-authenticate')).toBe('Basic realm="mcp-console", charset="UTF-8"');
    }
  });

  it('tells anyone whether it is ready, { status } alone, and the details only to console administrators', async () => {
    for (const route of ['/health/ready', '/health/live']) {
      const response = await fetch(new URL(route, url));
      expect({ route, status: response.status, body: await response.json() }).toEqual({
        route,
        status: 200,
        body: { status: 'ok' },
      });
    }
    expect((await fetch(new URL('/health/details', url))).status).toBe(401);
    expect(
      (await fetch(new URL('/health/details', url), { headers: { Authorization: 'Bearer token-b' } })).status,
    ).toBe(403);
    const details = await fetch(new URL('/health/details', url), { headers: { Authorization: 'Bearer token-a' } });
    expect(details.status).toBe(200);
    const report = (await details.json()) as { details: Record<string, { status: string; [detail: string]: unknown }> };
    expect(report.details.database).toMatchObject({ status: 'up', type: 'better-sqlite3' });
    expect(report.details.queue).toMatchObject({ status: 'up', mode: 'inline' });
    expect(report.details.process).toMatchObject({ status: 'up', pid: app!.child.pid });
  });

  it('refuses a token that is not in MCP_TOKENS', async () => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { Authorization: 'Bearer nope', 'Content-Type': 'application/json', Accept: 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(401);
  });
});

describe('the example app without MCP_CONSOLE_ADMINS', () => {
  const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-example-'));
  let app: ReadyChild | undefined;

  afterAll(async () => {
    await app?.stop();
    rmSync(workdir, { recursive: true, force: true });
  });

  it('says at start-up that the console admits nobody, and refuses every MCP token', async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      MCP_TOKENS: 'alice=token-a',
      HOST: '127.0.0.1',
      PORT: String(await freeLoopbackPort()),
      TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
    };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    delete env.MCP_CONSOLE_ADMINS;
    app = await spawnReady(
      process.execPath,
      ['-r', TS_REGISTER, join(ROOT, 'src', 'main.ts')],
      { cwd: workdir, env },
      /MCP endpoint: (\S+) /,
    );
    await pollUntil('the console line at start-up', () =>
      /Audit console: \S+ admits nobody: MCP_CONSOLE_ADMINS is unset/.test(app!.output()) ? true : undefined,
    );
    const url = new URL(app.ready[1]);
    const refused = await fetch(new URL('/mcp-console', url), { headers: { Authorization: 'Bearer token-a' } });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('The console admits nobody: MCP_CONSOLE_ADMINS names no administrator.');
    expect(
      (await fetch(new URL('/health/details', url), { headers: { Authorization: 'Bearer token-a' } })).status,
    ).toBe(403);
    expect(await (await fetch(new URL('/health/ready', url))).json()).toEqual({ status: 'ok' });
  });
});

describe('the example app with an unknown HTTP_ADAPTER', () => {
  it('does not start, and says which values HTTP_ADAPTER takes', async () => {
    const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-example-'));
    try {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        MCP_TOKENS: 'alice=token-a',
        HOST: '127.0.0.1',
        PORT: String(await freeLoopbackPort()),
        HTTP_ADAPTER: 'koa',
        TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
      };
      delete env.DATABASE_URL;
      delete env.REDIS_URL;
      const started = spawnReady(
        process.execPath,
        ['-r', TS_REGISTER, join(ROOT, 'src', 'main.ts')],
        { cwd: workdir, env },
        /MCP endpoint: /,
      );
      await expect(started).rejects.toThrow(
        /exited \(1\) before it was ready:[\s\S]*HTTP_ADAPTER="koa" is not supported: use express \(the default\) or fastify/,
      );
    } finally {
      rmSync(workdir, { recursive: true, force: true });
    }
  });
});
