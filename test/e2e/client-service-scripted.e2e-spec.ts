import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { McpClientModule, McpClientService, type McpClientOptions } from '../../src/mcp';
import { McpCapabilityError } from '../../src/mcp/errors';
import { createInMemoryMcpStores } from '../../src/mcp/testing';
import {
  openSse,
  result,
  sseEvent,
  startScriptedHttpServer,
  type ScriptedHttpServer,
  type ScriptedReply,
} from '../fixtures/http/scripted-http-server';
import { deleteRedisKeys, listRedisKeys, TEST_REDIS_URL } from '../support/redis';

jest.setTimeout(60_000);

/**
 * McpClientService over a scripted 2025-11-25 HTTP server: paged lists, the tool catalog of
 * several servers, and the tool list cache dropped by notifications/tools/list_changed, inline
 * and through a Bull queue (where the notification travels as job progress).
 */
describe('McpClientService on a scripted 2025 server', () => {
  const prefix = `mcp-svc-${randomBytes(4).toString('hex')}`;
  const servers: ScriptedHttpServer[] = [];
  const apps: INestApplication[] = [];

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close().catch(() => undefined);
    for (const server of servers.splice(0)) await server.close().catch(() => undefined);
  });
  afterAll(async () => {
    await deleteRedisKeys(`${prefix}:*`);
    expect(await listRedisKeys(`${prefix}:*`)).toEqual([]);
  });

  /** Answers the handshake itself (declaring `capabilities`) and every other POST from per-method scripts. */
  async function scripted(
    script: Record<string, ScriptedReply[]>,
    capabilities: Record<string, unknown> = { tools: {}, resources: {}, logging: {} },
  ): Promise<ScriptedHttpServer> {
    const server = await startScriptedHttpServer();
    servers.push(server);
    const dispatch: ScriptedReply = (res, body, req) => {
      if (req.method === 'DELETE') return void res.writeHead(200).end();
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the scripted peer answers whatever method name the client sent
      const method = String(body?.method ?? '');
      if (method === 'initialize') {
        const answer = {
          jsonrpc: '2.0',
          id: body?.id,
          result: { protocolVersion: '2025-11-25', capabilities, serverInfo: { name: 'scripted', version: '1' } },
        };
        return void res
          .writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': 'sess-1' })
          .end(JSON.stringify(answer));
      }
      if (method.startsWith('notifications/')) return void res.writeHead(202).end();
      const next = script[method]?.shift();
      if (!next) return void res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`unscripted ${method}`);
      return next(res, body, req);
    };
    server.reply(...Array.from({ length: 60 }, () => dispatch));
    return server;
  }

  async function client(
    entries: McpClientOptions['servers'],
    queue?: McpClientOptions['queue'] & Pick<McpClientOptions, 'redis'>,
  ): Promise<McpClientService> {
    const { redis, ...queueOptions } = queue ?? {};
    const moduleRef = await Test.createTestingModule({
      imports: [
        McpClientModule.forRoot({
          servers: entries,
          stores: createInMemoryMcpStores(),
          ...(queue ? { redis, queue: queueOptions } : {}),
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    apps.push(app);
    await app.init();
    return app.get(McpClientService);
  }

  /** A 2025 server entry: pinned, so no server/discover probe comes first. */
  const pinned = (server: ScriptedHttpServer) => ({ url: server.url, version: '2025-11-25' as const });
  const calls = (server: ScriptedHttpServer, method: string) =>
    server.received.filter((r) => r.body?.method === method).map((r) => r.body?.params as Record<string, unknown>);

  it('reads every page of resources and templates, a page without its field counting as empty', async () => {
    const server = await scripted({
      'resources/list': [
        result({ resources: [{ uri: 'file:///a' }], nextCursor: 'c2' }),
        result({ nextCursor: 'c3' }),
        result({ resources: [{ uri: 'file:///b' }], nextCursor: '' }),
      ],
      'resources/templates/list': [result({ resourceTemplates: [{ uriTemplate: 'file:///{x}' }] })],
      'logging/setLevel': [result({})],
    });
    const mcp = await client({ s: pinned(server) });
    await expect(mcp.listResources('s')).resolves.toEqual([{ uri: 'file:///a' }, { uri: 'file:///b' }]);
    expect(calls(server, 'resources/list').map((p) => p.cursor)).toEqual([undefined, 'c2', 'c3']);
    await expect(mcp.listResourceTemplates('s')).resolves.toEqual([{ uriTemplate: 'file:///{x}' }]);
    await expect(mcp.setLogLevel('s', 'warning')).resolves.toBeUndefined();
    expect(calls(server, 'logging/setLevel')).toEqual([{ level: 'warning' }]);
  });

  it('lists the tools of every server it can read, leaving out those without tools and those whose list fails', async () => {
    const tools = await scripted({
      'tools/list': [result({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] })],
    });
    const promptsOnly = await scripted({}, { prompts: {} });
    const broken = await scripted({});
    const mcp = await client({
      tools: pinned(tools),
      prompts: pinned(promptsOnly),
      broken: { ...pinned(broken), retry: { retries: 0 } } as never,
    });
    await expect(mcp.listAllTools({ timeoutMs: 10_000 })).resolves.toEqual([
      { server: 'tools', tool: { name: 'echo', inputSchema: { type: 'object' } } },
    ]);
    expect(calls(promptsOnly, 'tools/list')).toEqual([]);
    // Its 500 is retried by the queue (3 attempts by default), the transport's own retries being 0.
    expect(calls(broken, 'tools/list')).toEqual([{}, {}, {}]);
  });

  it('refuses a call the handshake shows the server cannot serve, before sending it; ping needs no capability', async () => {
    const server = await scripted({ ping: [result({})] }, { prompts: {} });
    const mcp = await client({ s: pinned(server) });
    const failure = mcp.callTool('s', 'echo', {});
    await expect(failure).rejects.toBeInstanceOf(McpCapabilityError);
    await expect(failure).rejects.toMatchObject({ server: 's' });
    await expect(mcp.ping('s')).resolves.toBeUndefined();
    expect(
      server.received.map((r) => r.body?.method).filter((m) => m !== 'initialize' && m !== 'notifications/initialized'),
    ).toEqual(['ping']);
  });

  /** A tools/call answered on an SSE stream that first announces a changed tool list. */
  const callAnnouncingChange: ScriptedReply = (res, body) => {
    openSse(res);
    res.write(sseEvent({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }));
    res.end(sseEvent({ jsonrpc: '2.0', id: body?.id, result: { content: [{ type: 'text', text: 'done' }] } }));
  };
  const listing = (name: string) => result({ tools: [{ name, inputSchema: { type: 'object' } }] });

  it('keeps the tool list until the server announces a change during a call (inline)', async () => {
    const server = await scripted({
      'tools/list': [listing('v1'), listing('v2')],
      'tools/call': [result({ content: [] }), callAnnouncingChange],
    });
    const mcp = await client({ s: pinned(server) });
    expect((await mcp.listTools('s')).map((t) => t.name)).toEqual(['v1']);
    await mcp.callTool('s', 'v1', {});
    expect((await mcp.listTools('s')).map((t) => t.name)).toEqual(['v1']);
    await expect(mcp.callTool('s', 'v1', {})).resolves.toEqual({ content: [{ type: 'text', text: 'done' }] });
    expect((await mcp.listTools('s')).map((t) => t.name)).toEqual(['v2']);
    expect(calls(server, 'tools/list')).toHaveLength(2);
  });

  it('hears the announcement through the Bull queue too, as job progress', async () => {
    const server = await scripted({
      'tools/list': [listing('v1'), listing('v2')],
      'tools/call': [callAnnouncingChange],
    });
    const name = `calls-${randomBytes(4).toString('hex')}`;
    const mcp = await client({ s: pinned(server) }, { redis: TEST_REDIS_URL, name, prefix, attempts: 1 });
    expect(mcp.mode).toBe('bull');
    expect((await mcp.listTools('s')).map((t) => t.name)).toEqual(['v1']);
    await expect(mcp.callTool('s', 'v1', {})).resolves.toEqual({ content: [{ type: 'text', text: 'done' }] });
    // The progress event travels over Redis pub/sub on its own; the cache drops once it arrives.
    const deadline = Date.now() + 10_000;
    let names: string[] = [];
    while (Date.now() < deadline) {
      names = (await mcp.listTools('s')).map((t) => t.name);
      if (names[0] === 'v2') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(names).toEqual(['v2']);
    expect(calls(server, 'tools/list')).toHaveLength(2);
  });
});
