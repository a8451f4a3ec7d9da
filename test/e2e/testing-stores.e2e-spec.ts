import type { INestApplication } from '@nestjs/common';
import { UnknownElementException } from '@nestjs/core/errors/exceptions/unknown-element.exception';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import {
  mcpServerStores,
  mcpClientStores,
  MCP_EVENT_SINK,
  MCP_HANDLER_SWITCH_STORE,
  MCP_OUTBOUND_SESSION_STORE,
  MCP_SESSION_STORE,
  MCP_TASK_STORE,
} from '../../src/mcp/stores';
import { McpClientModule, McpClientService, McpModule, McpRegistry, McpResourceNotifier } from '../../src/mcp';
import {
  InMemoryMcpEventSink,
  InMemoryMcpHandlerSwitchStore,
  InMemoryMcpTaskStore,
  InMemoryMcpOutboundSessionStore,
  InMemoryMcpSessionStore,
  InMemoryMcpSubscriptionStore,
  createInMemoryMcpStores,
} from '../../src/mcp/testing';
import { FeatureResources } from '../fixtures/features/feature-providers';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { callRequest, openSession, post, send, versionHeader } from '../support/mcp-wire';

/**
 * A host's unit test: `McpModule` with every store in memory and no TypeORM at all (no
 * DataSource, no PostgreSQL), served over real HTTP, the stores holding what the TypeORM ones
 * would have written.
 */
describe('McpModule on the in-memory stores of durable-mcp/testing (no database)', () => {
  async function listen(
    imports: Parameters<typeof Test.createTestingModule>[0]['imports'],
  ): Promise<{ app: INestApplication; url: (path: string) => string }> {
    const moduleRef = await Test.createTestingModule({
      imports,
      providers: [FixtureTools, FeatureResources],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: ['error', 'warn'] });
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as { port: number };
    return { app, url: (path) => `http://127.0.0.1:${port}${path}` };
  }

  describe('with store instances', () => {
    const stores = createInMemoryMcpStores();
    let app: INestApplication;
    let url: string;

    beforeAll(async () => {
      const running = await listen([McpModule.forRoot({ auth: fixtureAuth, stores })]);
      app = running.app;
      url = running.url('/mcp');
    });

    afterAll(async () => {
      await app?.close();
    });

    it('boots without any DataSource', () => {
      expect(() => app.get(DataSource)).toThrow(UnknownElementException);
      expect(app.get(MCP_SESSION_STORE)).toBe(stores.sessions);
      expect(app.get(MCP_EVENT_SINK)).toBe(stores.events);
    });

    it('serves initialize and tools/call, keeping the session and one event row per exchange', async () => {
      const { sessionId } = await openSession(url);
      const reply = await post(url, callRequest(7, 'echo', { text: 'hi' }), { sessionId, headers: versionHeader() });
      expect(reply.status).toBe(200);
      expect(reply.json).toMatchObject({ id: 7, result: { content: [{ type: 'text', text: 'hi' }] } });

      const [session] = stores.sessions.sessions;
      expect(session).toMatchObject({
        sessionId,
        mount: 'default',
        principalKey: 'alice',
        protocolVersion: '2025-11-25',
        terminatedAt: null,
      });
      expect(session.clientInfo).toEqual({ name: 'wire-test', version: '1.0.0' });

      const rows = stores.events.events.filter((event) => event.sessionRef === session.id);
      expect(rows.map((event) => [event.kind, event.method, event.status])).toEqual([
        ['request', 'initialize', 200],
        ['notification', 'notifications/initialized', 202],
        ['request', 'tools/call', 200],
      ]);
      expect(rows[2]).toMatchObject({
        direction: 'inbound',
        mount: 'default',
        principalKey: 'alice',
        protocolVersion: '2025-11-25',
        request: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
        response: { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'hi' }] } },
        isError: false,
      });
    });

    it('keeps subscriptions and the log level, and forgets a session after DELETE', async () => {
      const { sessionId } = await openSession(url);
      const headers = versionHeader();
      expect(
        (
          await post(
            url,
            { jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: 'docs://readme' } },
            { sessionId, headers },
          )
        ).json,
      ).toMatchObject({ result: {} });
      expect(
        (
          await post(
            url,
            { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'error' } },
            { sessionId, headers },
          )
        ).json,
      ).toMatchObject({ result: {} });
      expect(await app.get(McpResourceNotifier).subscribers('docs://readme')).toEqual([sessionId]);
      expect(stores.sessions.sessions.find((s) => s.sessionId === sessionId)?.logLevel).toBe('error');

      expect(
        (await post(url, callRequest(3, 'echo', { text: 'x' }), { sessionId, headers, token: 'token-bob' })).status,
      ).toBe(404);
      expect((await send(url, 'DELETE', { sessionId, headers })).status).toBe(204);
      expect((await post(url, callRequest(4, 'echo', { text: 'x' }), { sessionId, headers })).status).toBe(404);
      expect(await app.get(McpResourceNotifier).subscribers('docs://readme')).toEqual([]);
      expect(stores.events.events.at(-1)).toMatchObject({ kind: 'terminate', status: 204, principalKey: 'alice' });
    });

    it('keeps the registry switches: a tool switched off for bob leaves his list only', async () => {
      expect(app.get(MCP_HANDLER_SWITCH_STORE)).toBe(stores.handlerSwitches);
      await app.get(McpRegistry).disable('tool', 'echo', { principals: ['bob'] });
      expect(stores.handlerSwitches.switches).toEqual([
        { mount: 'default', kind: 'tool', name: 'echo', principalKey: 'bob', createdAt: expect.any(Date) },
      ]);
      const list = async (token: string) => {
        const { sessionId } = await openSession(url, token);
        const reply = await post(
          url,
          { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          { sessionId, headers: versionHeader(), token },
        );
        return (reply.json.result.tools as { name: string }[]).map((tool) => tool.name);
      };
      const everyTool = await list('token-alice');
      expect(everyTool).toContain('echo');
      expect(await list('token-bob')).toEqual(everyTool.filter((name) => name !== 'echo'));
      await app.get(McpRegistry).enable('tool', 'echo');
      expect(stores.handlerSwitches.switches).toEqual([]);
      expect(await list('token-bob')).toEqual(everyTool);
    });
  });

  describe('with store classes on a named mount', () => {
    let app: INestApplication;
    let url: string;

    beforeAll(async () => {
      const running = await listen([
        McpModule.forRoot({
          auth: fixtureAuth,
          mount: 'tests',
          path: '/tests/mcp',
          sessions: { idleTtlMs: 120_000 },
          stores: mcpServerStores({
            sessions: InMemoryMcpSessionStore,
            subscriptions: InMemoryMcpSubscriptionStore,
            events: InMemoryMcpEventSink,
            handlerSwitches: InMemoryMcpHandlerSwitchStore,
            tasks: InMemoryMcpTaskStore,
          }),
        }),
      ]);
      app = running.app;
      url = running.url('/tests/mcp');
    });

    afterAll(async () => {
      await app?.close();
    });

    it('builds each store in the mount with the mount name and idle TTL', async () => {
      const sessions = app.get<InMemoryMcpSessionStore>(MCP_SESSION_STORE);
      expect(sessions).toBeInstanceOf(InMemoryMcpSessionStore);
      expect(sessions.settings).toEqual({ mount: 'tests', idleTtlMs: 120_000 });
      const switches = app.get<InMemoryMcpHandlerSwitchStore>(MCP_HANDLER_SWITCH_STORE);
      expect(switches).toBeInstanceOf(InMemoryMcpHandlerSwitchStore);
      expect(switches.mount).toBe('tests');
      const tasks = app.get<InMemoryMcpTaskStore>(MCP_TASK_STORE);
      expect(tasks).toBeInstanceOf(InMemoryMcpTaskStore);
      expect(tasks.mount).toBe('tests');
      expect(() => app.get(DataSource)).toThrow(UnknownElementException);

      const { sessionId } = await openSession(url);
      expect((await post(url, callRequest(1, 'whoami'), { sessionId, headers: versionHeader() })).json).toMatchObject({
        result: { structuredContent: { principal: 'alice' } },
      });
      expect(sessions.sessions).toEqual([expect.objectContaining({ sessionId, mount: 'tests' })]);
      const events = app.get<InMemoryMcpEventSink>(MCP_EVENT_SINK).events;
      expect(events.map((event) => event.method)).toEqual(['initialize', 'notifications/initialized', 'tools/call']);
      expect(events.every((event) => event.mount === 'tests')).toBe(true);
    });
  });

  describe('McpClientModule with its stores in memory', () => {
    const server = createInMemoryMcpStores();
    const client = { outboundSessions: new InMemoryMcpOutboundSessionStore(), events: new InMemoryMcpEventSink() };
    let app: INestApplication;

    beforeAll(async () => {
      ({ app } = await listen([
        McpModule.forRoot({ auth: fixtureAuth, stores: server }),
        McpClientModule.forRoot({
          servers: { self: { transport: 'toolset', principal: 'carol' } },
          stores: mcpClientStores(client),
        }),
      ]));
    });

    afterAll(async () => {
      await app?.close();
    });

    it('calls a toolset with no database, writing outbound rows and the remote session to its own stores', async () => {
      expect(() => app.get(DataSource)).toThrow(UnknownElementException);
      const mcp = app.get(McpClientService);
      expect(await mcp.callTool('self', 'echo', { text: 'in memory' })).toMatchObject({
        content: [{ type: 'text', text: 'in memory' }],
      });
      expect(app.get(MCP_OUTBOUND_SESSION_STORE)).toBe(client.outboundSessions);
      // One exchange: the call's own in-process handshake told the capabilities, no ping before it.
      expect(client.events.events.map((event) => [event.direction, event.server, event.method])).toEqual([
        ['outbound', 'self', 'tools/call'],
      ]);
      expect(await client.outboundSessions.find('self', '')).toMatchObject({
        server: 'self',
        scopeKey: '',
        closedAt: null,
      });
      // The toolset was reached in process: no inbound row, no inbound session.
      expect(server.events.events).toEqual([]);
      expect(server.sessions.sessions).toEqual([]);
    });
  });
});
