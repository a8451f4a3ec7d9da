import { Injectable } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CreateMessageRequestSchema,
  CreateMessageResultSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
  ToolListChangedNotificationSchema,
  type ClientCapabilities,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { McpClientModule, McpClientService, McpGateway, McpGatewayModule, McpModule, McpTool } from '../../src/mcp';
import { McpConfigurationError } from '../../src/mcp/errors';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { startSdkSessionHttpServer, type SdkSessionHttpServer } from '../fixtures/sdk-session-http-server';
import { everythingServer } from '../fixtures/stdio/stdio-test-kit';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { installTestTelemetry, type TestTelemetry } from '../support/telemetry';

jest.setTimeout(120_000);

/** The mount's own tool, next to the re-served ones. */
@Injectable()
class OwnTools {
  @McpTool({ description: 'Answers pong' })
  ping_own(): string {
    return 'pong';
  }
}

/** How many times the upstream's `ask` tool started. */
let askRuns = 0;

/** Every McpServer the SDK fixture built (one per upstream session), so a test can change all of them. */
const upstreamServers: McpServer[] = [];

function newUpstreamServer(): McpServer {
  const server = new McpServer({ name: 'gateway-upstream', version: '1.0.0' });
  server.registerTool(
    'greet',
    { description: 'Greets someone', inputSchema: { name: z.string() } },
    async ({ name }, extra) => ({
      content: [{ type: 'text', text: `Hello, ${name} (upstream session ${extra.sessionId ?? 'none'})` }],
    }),
  );
  server.registerTool(
    'steps',
    { description: 'Reports two steps of progress, then answers', inputSchema: { tag: z.string() } },
    async ({ tag }, extra) => {
      const progressToken = extra._meta?.progressToken;
      for (const step of [1, 2]) {
        if (progressToken !== undefined)
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: step, total: 2, message: `${tag} step ${step}` },
          });
      }
      return { content: [{ type: 'text', text: `${tag} done` }] };
    },
  );
  server.registerTool('ask', { description: "Asks the caller's user for a name, then greets it" }, async (extra) => {
    askRuns++;
    const answer = await extra.sendRequest(
      {
        method: 'elicitation/create',
        params: {
          message: 'Your name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
      },
      ElicitResultSchema,
    );
    return { content: [{ type: 'text', text: `${answer.action}: hello ${String(answer.content?.name)}` }] };
  });
  server.registerTool('muse', { description: "Asks the caller's model for a line" }, async (extra) => {
    const answer = await extra.sendRequest(
      {
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: { type: 'text', text: 'A line?' } }], maxTokens: 10 },
      },
      CreateMessageResultSchema,
    );
    const content = answer.content as { type: string; text?: string };
    return { content: [{ type: 'text', text: `the model (${answer.model}) said: ${content.text ?? ''}` }] };
  });
  server.registerTool('secret', { description: 'Never re-served (denied)' }, async () => ({
    content: [{ type: 'text', text: 'hidden' }],
  }));
  server.registerPrompt(
    'greeting',
    { title: 'Greeting', description: 'Greets by name', argsSchema: { name: z.string() } },
    ({ name }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Say hello to ${name}` } }] }),
  );
  server.registerResource(
    'notes',
    'note://hello',
    { title: 'Hello note', description: 'A note', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, text: 'hello from the upstream note' }] }),
  );
  upstreamServers.push(server);
  return server;
}

describe('McpGatewayModule: one mount fronting server-everything over stdio and an official SDK HTTP server', () => {
  let db: TestDatabase;
  let upstream: SdkSessionHttpServer;
  let app: RunningApp;
  let telemetry: TestTelemetry;
  const clients: Client[] = [];

  async function connect(token = 'token-alice', capabilities: ClientCapabilities = {}): Promise<Client> {
    const client = new Client({ name: 'gateway-e2e', version: '1.0.0' }, { capabilities });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    return client;
  }

  const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();
  const text = (result: object) =>
    (((result as { content?: unknown }).content as Array<{ type: string; text?: string }>) ?? [])
      .map((block) => block.text ?? '')
      .join('');

  beforeAll(async () => {
    telemetry = installTestTelemetry();
    db = await createTestDatabase();
    upstream = await startSdkSessionHttpServer(newUpstreamServer);
    app = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [OwnTools],
          stateless: { requestStateSecret: 'a-shared-secret-of-the-gateway-suite' },
        }),
        McpClientModule.forRoot({
          servers: {
            everything: { command: everythingServer() },
            // Each delivery is still tried three times, only not 100 then 200 ms apart (see below).
            sdk: {
              url: upstream.url,
              version: '2025-11-25',
              scope: 'principal',
              retry: { retries: 2, initialDelayMs: 10 },
            },
          },
          // Each call still has three attempts, only not 500 ms then 1 s apart. A refused
          // connection is retried both ways, and the test of the upstream down waits out every
          // delay: for its call and for each list its refresh reads (and the app's close for a
          // periodic refresh under way).
          queue: { attempts: 3, backoffMs: 50 },
        }),
        McpGatewayModule.forRoot({
          upstreams: [
            {
              server: 'everything',
              prefix: 'ev_',
              allow: ['echo', 'get-sum', 'simple-prompt', 'trigger-elicitation-request'],
              serve: ['tools', 'prompts'],
            },
            { server: 'sdk', deny: ['secret'] },
          ],
          // Short enough for the test of a tool the upstream adds unannounced; each refresh spawns
          // server-everything (a stdio server spawned per call), so not much shorter.
          refreshIntervalMs: 4000,
        }),
      ],
      providers: [OwnTools],
    });
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await app?.close();
    await upstream?.close().catch(() => undefined);
    await db?.drop();
    await telemetry?.shutdown();
  });

  it('lists the union: its own tool and the upstreams allowed tools under their prefixes, none denied', async () => {
    const client = await connect();
    expect(await toolNames(client)).toEqual([
      'ev_echo',
      'ev_get-sum',
      'ev_trigger-elicitation-request',
      'ping_own',
      'sdk_ask',
      'sdk_greet',
      'sdk_muse',
      'sdk_steps',
    ]);
    const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
    expect(prompts.sort()).toEqual(['ev_simple-prompt', 'sdk_greeting']);
    // The upstream's schema is published as it declared it.
    const greet = (await client.listTools()).tools.find((tool) => tool.name === 'sdk_greet');
    expect(greet?.inputSchema).toMatchObject({
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
    });
    expect(greet?.description).toBe('Greets someone');
  });

  it('calls tools of both upstreams and a prompt of the stdio one', async () => {
    const client = await connect();
    expect(text(await client.callTool({ name: 'ev_echo', arguments: { message: 'via the gateway' } }))).toBe(
      'Echo: via the gateway',
    );
    expect(text(await client.callTool({ name: 'ev_get-sum', arguments: { a: 2, b: 40 } }))).toContain('42');
    expect(text(await client.callTool({ name: 'sdk_greet', arguments: { name: 'Ada' } }))).toMatch(/^Hello, Ada/);
    expect(text(await client.callTool({ name: 'ping_own', arguments: {} }))).toBe('pong');
    const prompt = await client.getPrompt({ name: 'ev_simple-prompt' });
    expect(prompt.messages.length).toBeGreaterThan(0);
  });

  it("refuses the mount's own validation before calling the upstream (a bad argument never leaves)", async () => {
    const client = await connect();
    const posted = upstream.posted.length;
    const answer = await client
      .callTool({ name: 'sdk_greet', arguments: { name: 42 } })
      .then((result) => ({ isError: result.isError, text: text(result) }))
      .catch((error: Error) => ({ isError: true, text: error.message }));
    expect(answer.isError).toBe(true);
    expect(upstream.posted.slice(posted).filter((body) => body.method === 'tools/call')).toEqual([]);
  });

  it("passes the upstream's progress on to the caller, in order", async () => {
    const client = await connect();
    const seen: Progress[] = [];
    const result = await client.callTool({ name: 'sdk_steps', arguments: { tag: 't1' } }, undefined, {
      onprogress: (progress) => seen.push(progress),
    });
    expect(text(result)).toBe('t1 done');
    expect(seen).toEqual([
      { progress: 1, total: 2, message: 't1 step 1' },
      { progress: 2, total: 2, message: 't1 step 2' },
    ]);
  });

  it("passes the upstream's elicitation and sampling requests to the caller's client, and its answers back", async () => {
    const client = await connect('token-alice', { elicitation: {}, sampling: {} });
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: 'assistant',
      content: { type: 'text', text: 'roses are red' },
      model: 'test-model',
    }));
    expect(text(await client.callTool({ name: 'sdk_ask', arguments: {} }))).toBe('accept: hello Ada');
    expect(asked).toEqual([expect.objectContaining({ message: 'Your name?' })]);
    expect(text(await client.callTool({ name: 'sdk_muse', arguments: {} }))).toBe(
      'the model (test-model) said: roses are red',
    );
  });

  it("serves server-everything's elicitation tool, which it lists only to a client announcing elicitation, and relays its form both ways", async () => {
    const client = await connect('token-alice', { elicitation: {} });
    const asked: Array<{ message?: string; requestedSchema?: { properties?: object } }> = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params);
      return { action: 'decline' };
    });
    const result = await client.callTool({ name: 'ev_trigger-elicitation-request', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain('User declined to provide the requested information');
    expect(asked).toHaveLength(1);
    expect(asked[0].message).toBe('Please provide inputs for the following fields:');
    expect(Object.keys(asked[0].requestedSchema?.properties ?? {})).toEqual(expect.arrayContaining(['name', 'email']));
  });

  it('relays an upstream elicitation to a 2026-07-28 caller through input_required, running the upstream tool again on the replay', async () => {
    const asked: string[] = [];
    const downstream = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: { gateway: { url: `${app.baseUrl}/mcp`, bearerToken: 'token-alice', version: '2026-07-28' } },
          handlers: {
            elicitation: (params) => {
              asked.push(String(params.message));
              return { action: 'accept', content: { name: 'Grace' } };
            },
          },
        }),
      ],
    });
    try {
      const before = askRuns;
      const result = await downstream.app.get(McpClientService).callTool('gateway', 'sdk_ask', {});
      expect(result.content).toEqual([{ type: 'text', text: 'accept: hello Grace' }]);
      expect(asked).toEqual(['Your name?']);
      // The first run asked and was ended by the input_required round; the replay got the answer.
      expect(askRuns - before).toBe(2);
    } finally {
      await downstream.close();
    }
  });

  it("answers the upstream -32601 when the caller's client lacks the capability", async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'sdk_ask', arguments: {} });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('-32601');
  });

  it("re-serves the upstream's prompts under the prefix and its resources under their own URIs", async () => {
    const client = await connect();
    const prompts = (await client.listPrompts()).prompts;
    expect(prompts.find((prompt) => prompt.name === 'sdk_greeting')).toMatchObject({
      title: 'Greeting',
      description: 'Greets by name',
      arguments: [expect.objectContaining({ name: 'name', required: true })],
    });
    const prompt = await client.getPrompt({ name: 'sdk_greeting', arguments: { name: 'Ada' } });
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Say hello to Ada' } }]);
    const resources = (await client.listResources()).resources;
    expect(resources).toEqual([
      expect.objectContaining({ uri: 'note://hello', name: 'sdk_notes', mimeType: 'text/plain', title: 'Hello note' }),
    ]);
    const read = await client.readResource({ uri: 'note://hello' });
    expect(read.contents).toEqual([
      expect.objectContaining({ uri: 'note://hello', text: 'hello from the upstream note' }),
    ]);
  });

  it('offers no completion for a prompt of an upstream that declares no completions', async () => {
    const client = await connect();
    const answer = await client.complete({
      ref: { type: 'ref/prompt', name: 'sdk_greeting' },
      argument: { name: 'name', value: 'A' },
    });
    expect(answer.completion).toEqual({ values: [], total: 0, hasMore: false });
  });

  it('gives each principal its own upstream session (scope principal) and audits the call inbound and outbound in one trace', async () => {
    const alice = await connect('token-alice');
    const bob = await connect('token-bob');
    const sessionOf = async (client: Client) =>
      /upstream session (\S+)\)/.exec(
        text(await client.callTool({ name: 'sdk_greet', arguments: { name: 'x' } })),
      )?.[1];
    const [a1, a2, b1] = [await sessionOf(alice), await sessionOf(alice), await sessionOf(bob)];
    expect(a1).toBeDefined();
    expect(a2).toBe(a1);
    expect(b1).not.toBe(a1);

    const rows = await db.dataSource.query<
      Array<{
        direction: string;
        server: string | null;
        principal_key: string | null;
        trace_id: string | null;
        request: unknown;
      }>
    >(
      `SELECT direction, server, principal_key, trace_id, request FROM mcp_events WHERE method = 'tools/call' ORDER BY created_at`,
    );
    // The three calls of this test (argument name "x"): inbound as sdk_greet, outbound to "sdk" as greet.
    const ofThisTest = (row: { request: unknown }) => JSON.stringify(row.request).includes('"name":"x"');
    const inbound = rows.filter((row) => row.direction === 'inbound' && ofThisTest(row));
    const outbound = rows.filter((row) => row.direction === 'outbound' && row.server === 'sdk' && ofThisTest(row));
    expect(inbound.map((row) => row.principal_key)).toEqual(['alice', 'alice', 'bob']);
    expect(outbound.map((row) => row.principal_key)).toEqual(['alice', 'alice', 'bob']);
    // Each call's inbound and outbound rows carry the same trace, one trace per call.
    expect(inbound.map((row) => row.trace_id)).toEqual(outbound.map((row) => row.trace_id));
    expect(new Set(inbound.map((row) => row.trace_id)).size).toBe(3);
    for (const row of inbound) expect(row.trace_id).toMatch(/^[0-9a-f]{32}$/);
  });

  it('serves a tool the upstream adds, and tells the connected clients that the list changed', async () => {
    const client = await connect();
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    for (const server of upstreamServers)
      server.registerTool('late', { description: 'Added at run time' }, async () => ({
        content: [{ type: 'text', text: 'late answer' }],
      }));
    await pollUntil(
      'sdk_late to be served',
      async () => ((await toolNames(client)).includes('sdk_late') ? true : undefined),
      15_000,
    );
    expect(text(await client.callTool({ name: 'sdk_late', arguments: {} }))).toBe('late answer');
    await pollUntil('a tools/list_changed notification', () => (changed > 0 ? true : undefined), 10_000);
  });

  it('answers a clean tool error when the upstream is down, and keeps serving its own tools and the other upstream', async () => {
    const client = await connect();
    await upstream.close();
    const result = await client.callTool({ name: 'sdk_greet', arguments: { name: 'anyone' } });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('The upstream server "sdk" could not run greet');
    expect(text(await client.callTool({ name: 'ping_own', arguments: {} }))).toBe('pong');
    expect(text(await client.callTool({ name: 'ev_echo', arguments: { message: 'still here' } }))).toBe(
      'Echo: still here',
    );
    // A refresh while the upstream is down keeps what was served.
    await app.app.get(McpGateway).refresh('sdk');
    expect(app.app.get(McpGateway).served('sdk').tools).toEqual(expect.arrayContaining(['sdk_greet', 'sdk_steps']));
  });
});

describe('McpGatewayModule: configuration errors', () => {
  it('refuses an upstream that is no server of McpClientModule, naming the known ones', async () => {
    const db = await createTestDatabase();
    try {
      await expect(
        startApp(db.url, {
          imports: [
            McpModule.forRoot({ auth: fixtureAuth }),
            McpClientModule.forRoot({ servers: { everything: { command: everythingServer() } } }),
            McpGatewayModule.forRoot({ upstreams: [{ server: 'nowhere' }] }),
          ],
        }),
      ).rejects.toThrow(/upstream "nowhere" is not a server of McpClientModule \(known: everything\)/);
    } finally {
      await db.drop();
    }
  });

  it('refuses bad options at forRoot', () => {
    expect(() => McpGatewayModule.forRoot({ upstreams: [] })).toThrow(McpConfigurationError);
    expect(() => McpGatewayModule.forRoot({ upstreams: [{ server: 'a' }, { server: 'a' }] })).toThrow(/named twice/);
    expect(() =>
      McpGatewayModule.forRoot({ upstreams: [{ server: 'a', serve: ['tools', 'everything' as 'tools'] }] }),
    ).toThrow(/serve/);
    expect(() => McpGatewayModule.forRoot({ upstreams: [{ server: 'a', allow: [''] }] })).toThrow(/allow/);
    expect(() =>
      McpGatewayModule.forRoot({ upstreams: [{ server: 'a', prefx: 'x' } as unknown as { server: string }] }),
    ).toThrow(/prefx/);
  });
});
