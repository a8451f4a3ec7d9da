import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { ElicitRequestSchema, ErrorCode, McpError, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
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
  server.registerPrompt(
    'team',
    {
      description: 'Names a team member',
      argsSchema: {
        member: completable(z.string(), (value) => {
          if (value === '?') throw new McpError(ErrorCode.InvalidParams, 'A member name has no question marks');
          return ['Ada', 'Alan'].filter((name) => name.startsWith(value));
        }),
      },
    },
    ({ member }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Hello ${member}` } }] }),
  );
  return server;
}

/**
 * The gateway in front of a pooled server-everything and SDK 1.x HTTP upstreams. `announce` on
 * the shared handshakes of a 2025-11-25 HTTP session and of a pooled stdio process: upstreams
 * that check the client's capabilities before they ask (SDK `elicitInput`) or list
 * (server-everything's elicitation tool) ask the gateway, whose downstream caller answers. The
 * upstream's resource templates are re-served (reads of a matching URI go to it), and
 * `completion/complete` of re-served prompts and templates is answered by the upstream. One pooled
 * server-everything process serves the whole suite.
 */
describe('McpGatewayModule over a pooled server-everything: announce, resource templates, completion', () => {
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
              allow: ['echo', 'trigger-elicitation-request', 'completable-prompt', 'demo://resource/dynamic/text/*'],
            },
            { server: 'sdk', serve: ['tools', 'prompts'] },
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
    expect(app.app.get(McpGateway).served('everything')).toEqual({
      tools: ['ev_echo', 'ev_trigger-elicitation-request'],
      prompts: ['ev_completable-prompt'],
      resources: [],
      resourceTemplates: ['demo://resource/dynamic/text/{resourceId}'],
    });
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

  it("re-serves the upstream's allowed resource templates, and reads a matching URI there", async () => {
    const client = await connect();
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      expect.objectContaining({
        uriTemplate: 'demo://resource/dynamic/text/{resourceId}',
        name: 'ev_Dynamic Text Resource',
        mimeType: 'text/plain',
      }),
    ]);
    const read = await client.readResource({ uri: 'demo://resource/dynamic/text/7' });
    expect(read.contents).toEqual([
      expect.objectContaining({
        uri: 'demo://resource/dynamic/text/7',
        text: expect.stringMatching(/^Resource 7: This is a plaintext resource/),
      }),
    ]);
    // The blob template was not allowed: its URIs are unknown to the mount.
    await expect(client.readResource({ uri: 'demo://resource/dynamic/blob/7' })).rejects.toThrow(/-32002|not found/i);
  });

  it("answers completion/complete of a re-served prompt and template from the upstream's completers", async () => {
    const client = await connect();
    expect(client.getServerCapabilities()?.completions).toEqual({});
    const department = await client.complete({
      ref: { type: 'ref/prompt', name: 'ev_completable-prompt' },
      argument: { name: 'department', value: 'S' },
    });
    expect(department.completion.values).toEqual(['Sales', 'Support']);
    // The arguments already chosen travel on to the upstream, whose completer depends on them.
    const lead = await client.complete({
      ref: { type: 'ref/prompt', name: 'ev_completable-prompt' },
      argument: { name: 'name', value: 'A' },
      context: { arguments: { department: 'Engineering' } },
    });
    expect(lead.completion.values).toEqual(['Alice']);
    const ids = (value: string) =>
      client
        .complete({
          ref: { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' },
          argument: { name: 'resourceId', value },
        })
        .then((answer) => answer.completion.values);
    expect(await ids('12')).toEqual(['12']);
    expect(await ids('twelve')).toEqual([]);
    expect(
      text(
        await client
          .getPrompt({ name: 'ev_completable-prompt', arguments: { department: 'Sales', name: 'Eve' } })
          .then((p) => ({ content: [p.messages[0].content] })),
      ),
    ).toBe('Please promote Eve to the head of the Sales team.');
  });

  it("passes an upstream completer's JSON-RPC error on to the caller with its code", async () => {
    const client = await connect();
    const member = (value: string) =>
      client.complete({ ref: { type: 'ref/prompt', name: 'sdk_team' }, argument: { name: 'member', value } });
    expect((await member('Al')).completion.values).toEqual(['Alan']);
    await expect(member('?')).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('A member name has no question marks'),
    });
  });
});
