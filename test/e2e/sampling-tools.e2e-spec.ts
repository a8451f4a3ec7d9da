import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  McpClientModule,
  McpClientService,
  McpModule,
  type McpClientRequestHandler,
  type McpServerConfig,
} from '../../src/mcp';
import {
  AGENT_SAMPLING_PARAMS,
  SamplingToolsTools,
  TOOL_USE_RESULT,
  ToolUseSamplingHandler,
} from '../fixtures/sampling/sampling-tools.fixtures';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { rawServer } from '../fixtures/stdio/stdio-test-kit';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

jest.setTimeout(60_000);

/** The refusal `ctx.sample` gives a tool when the client did not declare `sampling.tools`. */
const SERVER_REFUSAL = {
  name: 'McpUnsupportedSamplingToolsError',
  code: -32021,
  message:
    'The client did not declare tool use in sampling (capabilities.sampling.tools) that this sampling/createMessage with tools and toolChoice needs',
  data: { requiredCapabilities: { sampling: { tools: {} } } },
};

/**
 * Tool use in sampling (SEP-1577) on both halves: a client whose sampling handler accepts tools
 * declares `sampling.tools` and its handler gets `tools`/`toolChoice` unchanged, on a 2025 session
 * and on 2026-07-28; a client without it refuses such requests with -32602; the server's
 * `ctx.sample` refuses tools a client (ours, or the official SDK 1.x client) did not declare.
 */
describe('sampling with tools', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let withTools: RunningApp;
  let withoutTools: RunningApp;
  let configTools: RunningApp;
  const plainSeen: Record<string, unknown>[] = [];
  const configSeen: Record<string, unknown>[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [SamplingToolsTools],
          stateless: { requestStateSecret: 'sampling-tools-suite-secret-0001' },
        }),
      ],
      providers: [SamplingToolsTools],
    });
    const url = `${server.baseUrl}/mcp`;
    const servers: Record<string, McpServerConfig> = {
      session: { url, bearerToken: 'token-alice', version: '2025-11-25' },
      stateless: { url, bearerToken: 'token-alice', version: '2026-07-28' },
      raw: { command: rawServer(), version: '2025-11-25' },
    };
    withTools = await startApp(db.url, {
      imports: [McpClientModule.forRoot({ servers })],
      providers: [ToolUseSamplingHandler],
    });
    const plain: McpClientRequestHandler = (params) => (
      plainSeen.push(params),
      { role: 'assistant', content: { type: 'text', text: 'plain' }, model: 'plain-model' }
    );
    // The apps share the database, outbound sessions included: the plain client gets servers of its own names.
    const plainServers = { 'plain-session': servers.session, 'plain-stateless': servers.stateless, raw: servers.raw };
    withoutTools = await startApp(db.url, {
      imports: [McpClientModule.forRoot({ servers: plainServers, handlers: { sampling: plain } })],
    });
    const handler: McpClientRequestHandler = (params) => (configSeen.push(params), structuredClone(TOOL_USE_RESULT));
    configTools = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({ servers: { raw: servers.raw }, handlers: { sampling: { handler, tools: true } } }),
      ],
    });
  });

  afterAll(async () => {
    await configTools?.close();
    await withoutTools?.close();
    await withTools?.close();
    await server?.close();
    await db?.drop();
  });

  it.each(['session', 'stateless'])(
    'round trip on %s: the handler gets tools and toolChoice unchanged, the tool gets the tool_use result',
    async (name) => {
      const handler = withTools.app.get(ToolUseSamplingHandler);
      handler.seen.length = 0;
      const result = await withTools.app.get(McpClientService).callTool(name, 'weather_agent', {});
      expect(result.structuredContent).toEqual({ result: TOOL_USE_RESULT });
      expect(handler.seen).toEqual([[name, AGENT_SAMPLING_PARAMS]]);
    },
  );

  it('declares the exact capabilities: sampling.tools only with a handler that accepts tool use', async () => {
    const capabilitiesOf = async (app: RunningApp) =>
      (await app.app.get(McpClientService).callTool('raw', 'capabilities', {})).structuredContent;
    expect(await capabilitiesOf(withTools)).toEqual({ capabilities: { sampling: { tools: {} } } });
    expect(await capabilitiesOf(configTools)).toEqual({ capabilities: { sampling: { tools: {} } } });
    expect(await capabilitiesOf(withoutTools)).toEqual({ capabilities: { sampling: {} } });
    // The 2025 sessions our server stored hold the same objects.
    await withTools.app.get(McpClientService).callTool('session', 'weather_agent', {});
    await withoutTools.app.get(McpClientService).callTool('plain-session', 'weather_agent', {});
    const rows: { server: string; client_capabilities: Record<string, unknown> }[] = await db.dataSource.query(
      `SELECT o.server, s.client_capabilities FROM mcp_inbound_sessions s JOIN mcp_outbound_sessions o ON o.remote_session_id = s.session_id WHERE o.server IN ('session', 'plain-session') ORDER BY o.server`,
    );
    expect(rows).toEqual([
      { server: 'plain-session', client_capabilities: { sampling: {} } },
      { server: 'session', client_capabilities: { sampling: { tools: {} } } },
    ]);
  });

  it('a { handler, tools: true } handler gets the params unchanged from a server that sends tools', async () => {
    configSeen.length = 0;
    const result = await configTools.app
      .get(McpClientService)
      .callTool('raw', 'sample-params', { params: AGENT_SAMPLING_PARAMS });
    expect(result.structuredContent).toEqual({ reply: { jsonrpc: '2.0', id: 'fixture-1', result: TOOL_USE_RESULT } });
    expect(configSeen).toEqual([AGENT_SAMPLING_PARAMS]);
  });

  it.each([
    ['tools', { messages: AGENT_SAMPLING_PARAMS.messages, tools: AGENT_SAMPLING_PARAMS.tools, maxTokens: 5 }],
    ['toolChoice', { messages: AGENT_SAMPLING_PARAMS.messages, toolChoice: { mode: 'none' }, maxTokens: 5 }],
  ])(
    'a client without tool support answers a request carrying %s with -32602, and its handler never runs',
    async (named, params) => {
      plainSeen.length = 0;
      const result = await withoutTools.app.get(McpClientService).callTool('raw', 'sample-params', { params });
      expect(result.structuredContent).toEqual({
        reply: {
          jsonrpc: '2.0',
          id: 'fixture-1',
          error: {
            code: -32602,
            message: `Invalid params: this client does not support tool use in sampling (capabilities.sampling.tools), but the request carries ${named}`,
          },
        },
      });
      expect(plainSeen).toEqual([]);
    },
  );

  it.each(['session', 'stateless'])(
    'on %s, ctx.sample refuses tools to a client that did not declare them, before asking it',
    async (name) => {
      plainSeen.length = 0;
      const client = withoutTools.app.get(McpClientService);
      expect((await client.callTool(`plain-${name}`, 'weather_agent', {})).structuredContent).toEqual({
        refused: SERVER_REFUSAL,
      });
      const uncaught = await client
        .callTool(`plain-${name}`, 'weather_agent_uncaught', {})
        .catch((error: unknown) => error);
      expect(uncaught).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: { tools: {} } } } });
      expect(plainSeen).toEqual([]);
    },
  );

  describe('official SDK 1.x client', () => {
    async function sdkClient(capabilities: Record<string, unknown>, seen: unknown[]) {
      const client = new Client({ name: 'sampling-tools-e2e', version: '1.0.0' }, { capabilities });
      client.setRequestHandler(CreateMessageRequestSchema, (request) => {
        seen.push(request.params);
        return structuredClone(TOOL_USE_RESULT);
      });
      const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
        requestInit: { headers: { Authorization: 'Bearer token-alice' } },
      });
      await client.connect(transport);
      return { client, transport };
    }

    it('declaring sampling.tools, its handler gets the tools and its tool_use answer passes its own validation back to the tool', async () => {
      const seen: unknown[] = [];
      const { client, transport } = await sdkClient({ sampling: { tools: {} } }, seen);
      try {
        const result = await client.callTool({ name: 'weather_agent', arguments: {} });
        expect(result.structuredContent).toEqual({ result: TOOL_USE_RESULT });
        expect(seen).toEqual([AGENT_SAMPLING_PARAMS]);
      } finally {
        await transport.terminateSession();
        await client.close();
      }
    });

    it('declaring sampling without tools, the tool gets the refusal and the client is never asked', async () => {
      const seen: unknown[] = [];
      const { client, transport } = await sdkClient({ sampling: {} }, seen);
      try {
        const result = await client.callTool({ name: 'weather_agent', arguments: {} });
        expect(result.structuredContent).toEqual({ refused: SERVER_REFUSAL });
        expect(seen).toEqual([]);
      } finally {
        await transport.terminateSession();
        await client.close();
      }
    });
  });
});
