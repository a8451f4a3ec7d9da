import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { McpClientModule, McpClientService, type McpClientOptions } from '../../src/mcp';
import {
  McpCapabilityError,
  McpInputRequiredError,
  McpProtocolError,
  McpTimeoutError,
  McpTransportError,
} from '../../src/mcp/errors';
import { createInMemoryMcpStores } from '../../src/mcp/testing';
import {
  json,
  result,
  status,
  startScriptedHttpServer,
  type ScriptedHttpServer,
  type ScriptedReply,
} from '../fixtures/http/scripted-http-server';

const STATELESS = '2026-07-28';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';

/**
 * A pinned 2026-07-28 server over HTTP whose every answer is scripted per method, for the answers
 * an SDK peer does not give on demand: no capabilities, a capability left out, an unknown
 * resultType, paged tool lists, a refusal of the stateless request after the verdict.
 */
describe('McpClientService on a scripted 2026-07-28 HTTP server', () => {
  const servers: ScriptedHttpServer[] = [];
  const apps: INestApplication[] = [];

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close().catch(() => undefined);
    for (const server of servers.splice(0)) await server.close().catch(() => undefined);
  });

  /** A scripted server whose POSTs are answered from per-method scripts; a method with none left gets 500. */
  async function scripted(script: Record<string, ScriptedReply[]>): Promise<ScriptedHttpServer> {
    const server = await startScriptedHttpServer();
    servers.push(server);
    const dispatch: ScriptedReply = (res, body, req) => {
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the scripted peer answers whatever method name the client sent
      const method = String(body?.method ?? '');
      const next = script[method]?.shift();
      if (!next) return void res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`unscripted ${method}`);
      return next(res, body, req);
    };
    server.reply(...Array.from({ length: 50 }, () => dispatch));
    return server;
  }

  async function client(
    url: string,
    extra: Partial<McpClientOptions> & { stores?: ReturnType<typeof createInMemoryMcpStores> } = {},
    entry: Record<string, unknown> = { version: STATELESS },
  ): Promise<McpClientService> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        McpClientModule.forRoot({
          servers: { s: { url, retry: { retries: 0 }, ...entry } as never },
          stores: createInMemoryMcpStores(),
          ...extra,
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    await app.init();
    return app.get(McpClientService);
  }

  const methods = (server: ScriptedHttpServer) => server.received.map((r) => r.body?.method);
  const discovered = (capabilities?: Record<string, unknown>) =>
    result({
      resultType: 'complete',
      ...(capabilities ? { capabilities } : {}),
      _meta: { [SERVER_INFO_KEY]: { name: 'scripted', version: '1' } },
    });

  it('refuses a call the discovered capabilities do not allow, without sending it', async () => {
    const server = await scripted({ 'server/discover': [discovered({ prompts: {} })] });
    const mcp = await client(server.url);
    const failure = mcp.callTool('s', 'echo', {});
    await expect(failure).rejects.toBeInstanceOf(McpCapabilityError);
    await expect(failure).rejects.toMatchObject({ server: 's' });
    expect(methods(server)).toEqual(['server/discover']);
  });

  it('sends the call when server/discover names no capabilities, and answers ping with server/discover', async () => {
    const server = await scripted({
      'server/discover': [result({ resultType: 'complete' }), result({ resultType: 'complete' })],
      'prompts/get': [result({ messages: [] })],
    });
    const mcp = await client(server.url);
    await expect(mcp.getPrompt('s', 'greet')).resolves.toEqual({ messages: [] });
    await expect(mcp.ping('s')).resolves.toBeUndefined();
    expect(methods(server)).toEqual(['server/discover', 'prompts/get', 'server/discover']);
    expect(server.received[2].headers['mcp-method']).toBe('server/discover');
  });

  it("reads every page of tools/list for the call's headers, then drops serverInfo but keeps the rest of _meta", async () => {
    const server = await scripted({
      'server/discover': [discovered({ tools: {} })],
      'tools/list': [
        result({
          resultType: 'complete',
          tools: [{ name: 'other', inputSchema: { type: 'object' } }],
          nextCursor: 'p2',
        }),
        result({ resultType: 'complete', nextCursor: 'p3' }),
        result({
          tools: [
            {
              name: 'echo',
              inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
            },
          ],
        }),
      ],
      'tools/call': [
        result({
          resultType: 'complete',
          content: [],
          _meta: { [SERVER_INFO_KEY]: { name: 'scripted' }, trace: 't-1' },
        }),
      ],
    });
    const mcp = await client(server.url);
    await expect(mcp.callTool('s', 'echo', { region: 'eu' })).resolves.toEqual({
      content: [],
      _meta: { trace: 't-1' },
    });
    expect(methods(server)).toEqual(['server/discover', 'tools/list', 'tools/list', 'tools/list', 'tools/call']);
    const cursors = server.received
      .filter((r) => r.body?.method === 'tools/list')
      .map((r) => (r.body?.params as Record<string, unknown>).cursor);
    expect(cursors).toEqual([undefined, 'p2', 'p3']);
    expect(server.received[4].headers['mcp-param-region']).toBe('eu');
  });

  it('fails with McpProtocolError on an unknown resultType', async () => {
    const server = await scripted({
      'server/discover': [discovered({ resources: {} })],
      'resources/read': [result({ resultType: 'partial', contents: [] })],
    });
    const mcp = await client(server.url);
    const failure = mcp.readResource('s', 'file:///a');
    await expect(failure).rejects.toBeInstanceOf(McpProtocolError);
    await expect(failure).rejects.toThrow(
      'MCP server "s" answered resources/read with an unknown resultType "partial"',
    );
  });

  it('stops after maxInputRounds of input_required', async () => {
    const asking = () => result({ resultType: 'input_required', requestState: 'again' });
    const server = await scripted({
      'server/discover': [discovered({ prompts: {} })],
      'prompts/get': [asking(), asking(), asking()],
    });
    const mcp = await client(server.url, { advanced: { maxInputRounds: 2 } });
    const failure = mcp.getPrompt('s', 'greet');
    await expect(failure).rejects.toBeInstanceOf(McpInputRequiredError);
    await expect(failure).rejects.toThrow('still required input after 2 rounds of prompts/get');
    expect(methods(server)).toEqual(['server/discover', 'prompts/get', 'prompts/get', 'prompts/get']);
  });

  it.each([404, 400, 405])(
    'forgets what it knew of the server when it refuses a stateless tools/call with %i, and learns it again on the retry',
    async (code) => {
      const tools = result({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] });
      const server = await scripted({
        'server/discover': [discovered({ tools: {} }), discovered({ tools: {} })],
        'tools/list': [tools],
        'tools/call': [status(code, 'no such endpoint'), result({ content: [{ type: 'text', text: 'ok' }] })],
      });
      const mcp = await client(server.url);
      await expect(mcp.callTool('s', 'echo', {})).resolves.toEqual({ content: [{ type: 'text', text: 'ok' }] });
      expect(methods(server)).toEqual(['server/discover', 'tools/list', 'tools/call', 'server/discover', 'tools/call']);
    },
  );

  it('surfaces the refusal undelivered when no attempt is left', async () => {
    const server = await scripted({
      'server/discover': [discovered({ tools: {} })],
      'tools/list': [result({ tools: [] })],
      'tools/call': [status(404)],
    });
    const mcp = await client(server.url, { queue: { attempts: 1 } });
    const failure = mcp.callTool('s', 'echo', {});
    await expect(failure).rejects.toBeInstanceOf(McpTransportError);
    await expect(failure).rejects.toMatchObject({ status: 404, delivered: false });
    expect(methods(server)).toEqual(['server/discover', 'tools/list', 'tools/call']);
  });

  it('keeps what it knew of the server when a stateless request fails with another status', async () => {
    const server = await scripted({
      'server/discover': [discovered({ prompts: {} })],
      'prompts/get': [json(503, { error: 'busy' }), result({ messages: [] })],
    });
    const mcp = await client(server.url);
    await expect(mcp.getPrompt('s', 'greet')).resolves.toEqual({ messages: [] });
    expect(methods(server)).toEqual(['server/discover', 'prompts/get', 'prompts/get']);
  });

  describe("with version 'auto'", () => {
    /** Answers one 2025-11-25 handshake (fresh scripts for each server); a GET of the standalone stream gets 405 from the scripted server itself. */
    const legacyHandshake = (): Record<string, ScriptedReply[]> => ({
      initialize: [
        (res, body) =>
          void res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': 'legacy-1' }).end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: body?.id,
              result: {
                protocolVersion: '2025-11-25',
                capabilities: { tools: {} },
                serverInfo: { name: 'old', version: '1' },
              },
            }),
          ),
      ],
      'notifications/initialized': [(res) => void res.writeHead(202).end()],
    });

    it('fails the call undelivered when the probe proves nothing, and probes again on the next call', async () => {
      const server = await scripted({
        'server/discover': [
          status(503, 'warming up'),
          result({ supportedVersions: [STATELESS], capabilities: { tools: {} } }),
        ],
        'tools/list': [result({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] })],
        'tools/call': [result({ content: [] })],
      });
      const mcp = await client(server.url, { queue: { attempts: 1 } }, { version: 'auto' });
      const failure = mcp.callTool('s', 'echo', {});
      await expect(failure).rejects.toBeInstanceOf(McpTransportError);
      await expect(failure).rejects.toMatchObject({ status: 503, delivered: false });
      expect(methods(server)).toEqual(['server/discover']);
      await expect(mcp.callTool('s', 'echo', {})).resolves.toEqual({ content: [] });
      expect(methods(server)).toEqual(['server/discover', 'server/discover', 'tools/list', 'tools/call']);
    });

    it('takes a server that does not answer server/discover within probeTimeoutMs for a 2025 server', async () => {
      const server = await scripted({
        'server/discover': [() => undefined],
        ...legacyHandshake(),
        'tools/call': [result({ content: [{ type: 'text', text: 'old school' }] })],
      });
      const mcp = await client(server.url, {}, { version: 'auto', probeTimeoutMs: 200 });
      await expect(mcp.callTool('s', 'echo', {})).resolves.toEqual({ content: [{ type: 'text', text: 'old school' }] });
      expect(methods(server)).toEqual(['server/discover', 'initialize', 'notifications/initialized', 'tools/call']);
    });

    it('fails the call undelivered when the probe used up the whole call timeout', async () => {
      const server = await scripted({ 'server/discover': [() => undefined] });
      const mcp = await client(server.url, { queue: { attempts: 1 } }, { version: 'auto' });
      const failure = mcp.callTool('s', 'echo', {}, { timeoutMs: 300 });
      await expect(failure).rejects.toBeInstanceOf(McpTimeoutError);
      await expect(failure).rejects.toMatchObject({ delivered: false, timeoutMs: 300 });
      expect(methods(server)).toEqual(['server/discover']);
    });

    it('lets a second instance reuse the persisted verdict on a 2025 server: no second probe', async () => {
      const notFound: ScriptedReply = (res, body) =>
        void res
          .writeHead(200, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: body?.id, error: { code: -32601, message: 'Method not found' } }));
      const server = await scripted({
        'server/discover': [notFound],
        ...legacyHandshake(),
        'tools/call': [
          result({ content: [{ type: 'text', text: 'first' }] }),
          result({ content: [{ type: 'text', text: 'second' }] }),
        ],
      });
      const stores = createInMemoryMcpStores();
      const first = await client(server.url, { stores }, { version: 'auto' });
      await expect(first.callTool('s', 'echo', {})).resolves.toEqual({ content: [{ type: 'text', text: 'first' }] });
      const second = await client(server.url, { stores }, { version: 'auto' });
      await expect(second.callTool('s', 'echo', {})).resolves.toEqual({ content: [{ type: 'text', text: 'second' }] });
      expect(methods(server)).toEqual([
        'server/discover',
        'initialize',
        'notifications/initialized',
        'tools/call',
        'tools/call',
      ]);
      expect(server.received[4].headers['mcp-session-id']).toBe('legacy-1');
    });
  });
});
