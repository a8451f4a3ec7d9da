import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  PromptListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { McpModule, McpRegistry, McpResourceNotifier } from '../../src/mcp';
import { McpStreamRegistry } from '../../src/mcp/server/sessions/mcp-stream-registry';
import { statelessRequest, routingHeaders } from '../fixtures/stateless/stateless-wire';
import { SseReader } from '../fixtures/sse/sse-reader';
import { startApp, type RunningApp } from '../support/http-app';
import { MCP_ACCEPT, openSession, post, send, versionHeader } from '../support/mcp-wire';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, listRedisKeys, TEST_REDIS_URL } from '../support/redis';

/** What every replica adds at boot: the rule for handlers, which are code. */
@Injectable()
class RuntimeHandlers implements OnModuleInit {
  constructor(private readonly registry: McpRegistry) {}

  async onModuleInit(): Promise<void> {
    await this.registry.addTool(
      {
        name: 'greet',
        description: 'Greets someone',
        input: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] },
      },
      ({ who }: { who: string }) => `hello ${who}`,
    );
    await this.registry.addTool({ name: 'spare', description: 'A tool the tests remove' }, () => 'spare');
    await this.registry.addPrompt(
      { name: 'summary', description: 'Summarises', arguments: [{ name: 'topic', required: true }] },
      ({ topic }: { topic: string }) => `Summarise ${topic}`,
    );
    await this.registry.addResource({ uri: 'notes://shared', name: 'shared-notes' }, () => 'shared');
    await this.registry.addResource({ uri: 'notes://marker', name: 'marker' }, () => 'marker');
  }
}

/** `token-<key>` is the principal `<key>`: the suite needs more principals than the shared fixture's two. */
const suiteAuth = (token: string) => (/^token-[a-z]+$/.test(token) ? token.slice('token-'.length) : null);

/** A change waited for on a client: resolves on the next notification of the kind. */
function nextNotification(
  client: Client,
  schema: typeof ToolListChangedNotificationSchema | typeof PromptListChangedNotificationSchema,
): Promise<string> {
  return new Promise((resolve) =>
    client.setNotificationHandler(schema, (notification) => resolve(notification.method)),
  );
}

/**
 * `McpRegistry` on two replicas sharing PostgreSQL and Redis: switches made on replica A reach
 * an SDK client whose session stream is held by replica B (list_changed, then the list shows the
 * change), per principal, for a replica booted later, on 2026-07-28 listen streams, and on the
 * resource updates a session GET stream on B carries.
 */
describe('McpRegistry across replicas (PostgreSQL + Redis)', () => {
  let db: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;
  const apps: RunningApp[] = [];
  const clients: Client[] = [];
  const readers: SseReader[] = [];
  const channelPrefix = `registry-e2e-${randomBytes(6).toString('hex')}`;

  const boot = async ({
    prefix = channelPrefix,
    databaseTimeoutMs,
  }: { prefix?: string; databaseTimeoutMs?: number } = {}) => {
    const app = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: suiteAuth,
          redis: TEST_REDIS_URL,
          advanced: { pubsub: { channelPrefix: prefix } },
          stateless: { requestStateSecret: 'a-shared-secret-of-the-test-suite' },
          ...(databaseTimeoutMs ? { advanced: { database: { timeoutMs: databaseTimeoutMs } } } : {}),
        }),
      ],
      providers: [RuntimeHandlers],
    });
    apps.push(app);
    return app;
  };

  /** An SDK client of `app` whose standalone GET stream is open there. */
  const connect = async (app: RunningApp, token: string): Promise<Client> => {
    const transport = new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'registry-e2e', version: '1.0.0' });
    clients.push(client);
    await client.connect(transport);
    const streams = app.app.get(McpStreamRegistry, { strict: false });
    await pollUntil('the client GET stream', () => (streams.has(transport.sessionId as string) ? true : undefined));
    return client;
  };

  /** The switch rows of the mount, as PostgreSQL holds them. */
  const switchRows = async (): Promise<string[]> =>
    (
      await db.dataSource.query(
        `SELECT kind, name, principal_key FROM mcp_handler_switches WHERE mount = 'default' ORDER BY kind, name, principal_key`,
      )
    ).map(
      (row: { kind: string; name: string; principal_key: string }) => `${row.kind}:${row.name}:${row.principal_key}`,
    );
  const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();
  const registryOf = (app: RunningApp) => app.app.get(McpRegistry, { strict: false });

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await boot();
    b = await boot();
  });

  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.cancel().catch(() => undefined)));
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    for (const app of apps) await app.close().catch(() => undefined);
    await deleteRedisKeys(`${channelPrefix}*`, `${channelPrefix}-fresh*`);
    await db?.drop();
  });

  it('declares listChanged for tools and prompts', async () => {
    const client = await connect(b, 'token-alice');
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    expect(client.getServerCapabilities()?.prompts).toEqual({ listChanged: true });
  });

  it('a tool disabled on A: the client on B gets tools/list_changed, then neither lists nor calls it; enabling it again brings it back', async () => {
    const client = await connect(b, 'token-alice');
    expect(await toolNames(client)).toEqual(['greet', 'spare']);
    expect(await client.callTool({ name: 'greet', arguments: { who: 'Ada' } })).toEqual({
      content: [{ type: 'text', text: 'hello Ada' }],
    });

    const changed = nextNotification(client, ToolListChangedNotificationSchema);
    await registryOf(a).disable('tool', 'greet');
    expect(await changed).toBe('notifications/tools/list_changed');
    expect(await toolNames(client)).toEqual(['spare']);
    await expect(client.callTool({ name: 'greet', arguments: { who: 'Ada' } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: greet'),
    });

    const back = nextNotification(client, ToolListChangedNotificationSchema);
    await registryOf(a).enable('tool', 'greet');
    expect(await back).toBe('notifications/tools/list_changed');
    expect(await toolNames(client)).toEqual(['greet', 'spare']);
  });

  it('a tool disabled for bob only: bob does not see it, alice still does', async () => {
    const alice = await connect(b, 'token-alice');
    const bob = await connect(b, 'token-bob');
    const bobChanged = nextNotification(bob, ToolListChangedNotificationSchema);
    await registryOf(a).disable('tool', 'greet', { principals: ['bob'] });
    expect(await bobChanged).toBe('notifications/tools/list_changed');
    expect(await toolNames(bob)).toEqual(['spare']);
    expect(await toolNames(alice)).toEqual(['greet', 'spare']);
    await expect(bob.callTool({ name: 'greet', arguments: { who: 'Bob' } })).rejects.toMatchObject({ code: -32602 });
    // B applies a change made on A when the bus brings it: the notification says it is done.
    const bobBack = nextNotification(bob, ToolListChangedNotificationSchema);
    await registryOf(a).enable('tool', 'greet', { principals: ['bob'] });
    expect(await bobBack).toBe('notifications/tools/list_changed');
    expect(await toolNames(bob)).toEqual(['greet', 'spare']);
  });

  it('a replica booted after a disable sees it disabled', async () => {
    await registryOf(a).disable('prompt', 'summary');
    const c = await boot();
    const client = await connect(c, 'token-alice');
    expect((await client.listPrompts()).prompts).toEqual([]);
    await expect(client.getPrompt({ name: 'summary', arguments: { topic: 'x' } })).rejects.toMatchObject({
      code: -32602,
    });

    const changed = nextNotification(client, PromptListChangedNotificationSchema);
    await registryOf(b).enable('prompt', 'summary');
    expect(await changed).toBe('notifications/prompts/list_changed');
    expect((await client.getPrompt({ name: 'summary', arguments: { topic: 'x' } })).messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Summarise x' } },
    ]);
  });

  it('a 2026-07-28 listen stream on B that asked for tool list changes gets them from a change on A', async () => {
    const body = statelessRequest(7, 'subscriptions/listen', { notifications: { toolsListChanged: true } });
    const response = await fetch(`${b.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        ...routingHeaders(body),
        'Content-Type': 'application/json',
        Accept: MCP_ACCEPT,
        Authorization: 'Bearer token-alice',
      },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    const reader = new SseReader(response);
    readers.push(reader);
    expect(JSON.parse((await reader.next())!.data)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { toolsListChanged: true }, _meta: { 'io.modelcontextprotocol/subscriptionId': 7 } },
    });
    await registryOf(a).disable('tool', 'spare', { principals: ['carol'] });
    expect(JSON.parse((await reader.next())!.data)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 7 } },
    });
  });

  it('a switch is a PostgreSQL row: it survives deleting every Redis key of the suite, and a replica on a fresh Redis key prefix sees it', async () => {
    await registryOf(a).disable('tool', 'greet', { principals: ['dave'] });
    expect(await switchRows()).toEqual(['tool:greet:dave', 'tool:spare:carol']);
    expect(
      (await listRedisKeys(`${channelPrefix}*`)).filter((key) => key.slice(channelPrefix.length).includes('registry')),
    ).toEqual([]);
    await deleteRedisKeys(`${channelPrefix}*`);

    const d = await boot({ prefix: `${channelPrefix}-fresh` });
    const dave = await connect(d, 'token-dave');
    expect(await toolNames(dave)).toEqual(['spare']);
    expect(await toolNames(await connect(d, 'token-alice'))).toEqual(['greet', 'spare']);
    expect(await toolNames(await connect(d, 'token-carol'))).toEqual(['greet']);

    await registryOf(d).enable('tool', 'greet', { principals: ['dave'] });
    expect(await switchRows()).toEqual(['tool:spare:carol']);
    expect(await toolNames(dave)).toEqual(['greet', 'spare']);
  });

  it('replicas switching the same handler at once keep every row each one meant', async () => {
    await Promise.all([
      registryOf(a).disable('tool', 'greet', { principals: ['p1', 'p2'] }),
      registryOf(b).disable('tool', 'greet', { principals: ['p2', 'p3'] }),
      registryOf(a).disable('tool', 'greet'),
    ]);
    expect(await switchRows()).toEqual([
      'tool:greet:',
      'tool:greet:p1',
      'tool:greet:p2',
      'tool:greet:p3',
      'tool:spare:carol',
    ]);
    await Promise.all([
      registryOf(a).enable('tool', 'greet', { principals: ['p1'] }),
      registryOf(b).enable('tool', 'greet', { principals: ['p3'] }),
    ]);
    expect(await switchRows()).toEqual(['tool:greet:', 'tool:greet:p2', 'tool:spare:carol']);
    await registryOf(b).enable('tool', 'greet');
    expect(await switchRows()).toEqual(['tool:spare:carol']);
  });

  it('a switch the database does not take within database.timeoutMs rejects with McpDatabaseUnavailableError; an empty principal key is refused', async () => {
    const e = await boot({ databaseTimeoutMs: 300 });
    await expect(registryOf(e).disable('tool', 'greet', { principals: ['bob', ''] })).rejects.toThrow(
      'McpRegistry: principal keys must be non-empty strings (got ["bob",""])',
    );
    const locker = new PgClient({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE mcp_handler_switches IN ACCESS EXCLUSIVE MODE');
      await expect(registryOf(e).enable('tool', 'not-switched')).rejects.toMatchObject({
        name: 'McpDatabaseUnavailableError',
        operation: 'handler switch delete',
        timeoutMs: 300,
      });
      await locker.query('ROLLBACK');
    } finally {
      await locker.end();
    }
    await registryOf(e).disable('prompt', 'summary', { principals: ['erin'] });
    expect(await switchRows()).toEqual(['prompt:summary:erin', 'tool:spare:carol']);
    await registryOf(e).enable('prompt', 'summary');
    expect(await switchRows()).toEqual(['tool:spare:carol']);
  });

  it('a resource switched off on A for the principal of a session whose GET stream B holds is no longer announced on it, from either replica, until it is on again', async () => {
    const url = `${b.baseUrl}/mcp`;
    const session = await openSession(url);
    const headers = versionHeader();
    for (const [id, uri] of [
      [1, 'notes://shared'],
      [2, 'notes://marker'],
    ] as const) {
      expect(
        (
          await post(
            url,
            { jsonrpc: '2.0', id, method: 'resources/subscribe', params: { uri } },
            { sessionId: session.sessionId, headers },
          )
        ).json,
      ).toEqual({ jsonrpc: '2.0', id, result: {} });
    }
    const response = await fetch(url, {
      headers: {
        Authorization: 'Bearer token-alice',
        Accept: 'text/event-stream',
        'Mcp-Session-Id': session.sessionId,
        ...headers,
      },
    });
    expect(response.status).toBe(200);
    const stream = new SseReader(response);
    readers.push(stream);
    expect((await stream.next())?.data).toBe('');
    const next = async () => JSON.parse((await stream.next())!.data);
    const updated = (uri: string) => ({ jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
    const notifierOf = (app: RunningApp) => app.app.get(McpResourceNotifier, { strict: false });
    try {
      await registryOf(a).disable('resource', 'notes://shared', { principals: ['alice'] });
      // B writes list_changed to its streams once it applied the switch it heard of from A.
      expect(await next()).toEqual({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
      expect(await notifierOf(a).resourceUpdated('notes://shared')).toEqual([]);
      expect(await notifierOf(b).resourceUpdated('notes://shared')).toEqual([]);
      expect(await notifierOf(a).resourceUpdated('notes://marker')).toEqual([session.sessionId]);
      expect(await next()).toEqual(updated('notes://marker'));
    } finally {
      await registryOf(a).enable('resource', 'notes://shared', { principals: ['alice'] });
    }
    expect(await next()).toEqual({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
    expect(await notifierOf(b).resourceUpdated('notes://shared')).toEqual([session.sessionId]);
    expect(await next()).toEqual(updated('notes://shared'));
    expect(await notifierOf(a).resourceUpdated('notes://shared')).toEqual([session.sessionId]);
    expect(await next()).toEqual(updated('notes://shared'));
    expect((await send(url, 'DELETE', { sessionId: session.sessionId })).status).toBe(204);
  });

  it('a tool removed on every replica answers unknown tool (-32602); a clashing name is refused', async () => {
    const client = await connect(b, 'token-alice');
    const changed = nextNotification(client, ToolListChangedNotificationSchema);
    for (const app of apps) expect(await registryOf(app).removeTool('spare')).toBe(true);
    expect(await changed).toBe('notifications/tools/list_changed');
    expect(await toolNames(client)).toEqual(['greet']);
    await expect(client.callTool({ name: 'spare', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: spare'),
    });
    expect(await registryOf(b).removeTool('spare')).toBe(false);
    await expect(registryOf(b).addTool({ name: 'greet', description: 'again' }, () => 'x')).rejects.toThrow(
      'Duplicate MCP tool "greet" on mount "default"',
    );
  });
});
