import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ElicitRequestSchema, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { McpClientModule, McpClientService, McpGateway, McpGatewayModule, McpModule } from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { startSdkSessionHttpServer, type SdkSessionHttpServer } from '../fixtures/sdk-session-http-server';
import { everythingServer } from '../fixtures/stdio/stdio-test-kit';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

jest.setTimeout(60_000);

/** An SDK 1.x upstream whose tool asks through `elicitInput`, which checks the client's capabilities first. */
function newUpstreamServer(): McpServer {
  const server = new McpServer({ name: 'gateway-announce-upstream', version: '1.0.0' });
  server.registerTool('ask', { description: 'Asks for a name (checks the client capabilities first)' }, async () => {
    const answer = await server.server.elicitInput({
      message: 'Your name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    });
    return { content: [{ type: 'text', text: `${answer.action}: hello ${String(answer.content?.name)}` }] };
  });
  return server;
}

/**
 * `announce` on the shared handshakes of a 2025-11-25 HTTP session and of a pooled stdio
 * process: upstreams that check the client's capabilities before they ask (SDK `elicitInput`) or
 * list (server-everything's elicitation tool) ask the gateway, whose downstream caller answers.
 * One pooled server-everything process serves the whole suite.
 */
describe('McpGatewayModule: announcing per-call capabilities on shared handshakes', () => {
  let db: TestDatabase;
  let upstream: SdkSessionHttpServer;
  let app: RunningApp;
  const clients: Client[] = [];

  async function connect(capabilities: ClientCapabilities = {}): Promise<Client> {
    const client = new Client({ name: 'gateway-announce-e2e', version: '1.0.0' }, { capabilities });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
        requestInit: { headers: { Authorization: 'Bearer token-alice' } },
      }),
    );
    clients.push(client);
    return client;
  }
  const text = (result: object) =>
    (((result as { content?: unknown }).content as Array<{ type: string; text?: string }>) ?? [])
      .map((block) => block.text ?? '')
      .join('');
  /** A caller whose user gives the name Ada to every form, and the messages it was asked. */
  async function answeringCaller(): Promise<{ client: Client; asked: string[] }> {
    const client = await connect({ elicitation: {} });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(String(request.params.message));
      return { action: 'accept', content: { name: 'Ada', email: 'ada@example.com' } };
    });
    return { client, asked };
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    upstream = await startSdkSessionHttpServer(newUpstreamServer);
    app = await startApp(db.url, {
      imports: [
        McpModule.forRoot({ auth: fixtureAuth }),
        McpClientModule.forRoot({
          servers: {
            everything: {
              command: everythingServer(),
              version: '2025-11-25',
              stateless: true,
              pool: { max: 1, idleMs: 60_000 },
              announce: { elicitation: true },
            },
            sdk: { url: upstream.url, version: '2025-11-25', announce: { elicitation: true } },
            plain: { url: upstream.url, version: '2025-11-25' },
          },
        }),
        McpGatewayModule.forRoot({
          upstreams: [
            {
              server: 'everything',
              prefix: 'ev_',
              allow: ['echo', 'trigger-elicitation-request'],
              serve: ['tools'],
            },
            { server: 'sdk', serve: ['tools'] },
            { server: 'plain', serve: ['tools'] },
          ],
          refreshIntervalMs: 0,
        }),
      ],
    });
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await app?.close();
    await upstream?.close().catch(() => undefined);
    await db?.drop();
  });

  it('serves the tools of a pooled stdio upstream, its elicitation tool included when announced', async () => {
    expect(app.app.get(McpGateway).served('everything').tools.sort()).toEqual([
      'ev_echo',
      'ev_trigger-elicitation-request',
    ]);
    const client = await connect();
    expect(text(await client.callTool({ name: 'ev_echo', arguments: { message: 'pooled' } }))).toBe('Echo: pooled');
  });

  it('a downstream caller answers the elicitation a pooled server-everything asked', async () => {
    const { client, asked } = await answeringCaller();
    const result = await client.callTool({ name: 'ev_trigger-elicitation-request', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(asked).toEqual(['Please provide inputs for the following fields:']);
    expect(text(result)).toContain('Ada');
  });

  it('a downstream caller answers the elicitInput of an SDK HTTP upstream whose session announced elicitation', async () => {
    const { client, asked } = await answeringCaller();
    expect(text(await client.callTool({ name: 'sdk_ask', arguments: {} }))).toBe('accept: hello Ada');
    expect(asked).toEqual(['Your name?']);
  });

  it('without announce the same upstream refuses to ask (its session did not announce elicitation)', async () => {
    const { client, asked } = await answeringCaller();
    const result = await client.callTool({ name: 'plain_ask', arguments: {} });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('Client does not support form elicitation');
    expect(asked).toEqual([]);
  });

  it('outside a gateway call, with no handler, the announced request gets -32601', async () => {
    const result = await app.app.get(McpClientService).callTool('sdk', 'ask', {});
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('-32601');
  });
});
