import { McpClientModule, McpClientService, McpModule } from '../../src/mcp';
import { DecoratedClientHandlers, InProcessCaller } from '../fixtures/documented/client-handler-providers';
import { DocumentedTools } from '../fixtures/documented/documented-tools';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * The client's decorated handlers (`@McpElicitationHandler`, `@McpSamplingHandler`,
 * `@McpRootsHandler` on a provider) answering a real server during calls, on a 2025 session and on
 * 2026-07-28; and `@InjectMcpToolset` delivering JSON-RPC to a mount in process.
 */
describe('Client handler decorators and @InjectMcpToolset', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let clientApp: RunningApp;
  let client: McpClientService;
  let handlers: DecoratedClientHandlers;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [DocumentedTools],
          stateless: { requestStateSecret: 'client-handlers-suite-secret-01' },
        }),
        McpModule.forRoot({ mount: 'inproc', path: '/inproc', auth: fixtureAuth, providers: [FixtureTools] }),
      ],
      providers: [DocumentedTools, FixtureTools, InProcessCaller],
    });
    const url = `${server.baseUrl}/mcp`;
    clientApp = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: {
            session: { url, bearerToken: 'token-alice', version: '2025-11-25' },
            stateless: { url, bearerToken: 'token-alice', version: '2026-07-28' },
          },
        }),
      ],
      providers: [DecoratedClientHandlers],
    });
    client = clientApp.app.get(McpClientService);
    handlers = clientApp.app.get(DecoratedClientHandlers);
  });

  afterAll(async () => {
    await clientApp?.close();
    await server?.close();
    await db?.drop();
  });

  it.each([
    ['session', '2025-11-25: server requests on the SSE stream'],
    ['stateless', '2026-07-28: input_required rounds'],
  ])(
    'the decorated handlers answer the elicitation, sampling and roots requests of a call on %s (%s)',
    async (name) => {
      handlers.answered.length = 0;
      const result = await client.callTool(name, 'ask_everything', {});
      expect(result.content).toEqual([
        { type: 'text', text: 'accept:Ada / handler-model:hi from the handler / file:///handler-root' },
      ]);
      expect(result.isError).toBeUndefined();
      // Each handler answered exactly once (sorted: the three requests may come in any order).
      expect([...handlers.answered].sort()).toEqual([
        `elicitation ${name} elicitation/create`,
        `roots ${name} roots/list`,
        `sampling ${name} sampling/createMessage`,
      ]);
    },
  );

  it('the client announces the capabilities its decorated handlers serve', async () => {
    await client.callTool('session', 'show_meta', {});
    const [session] = await db.dataSource.query(
      `SELECT s.client_capabilities FROM mcp_inbound_sessions s JOIN mcp_outbound_sessions o ON o.remote_session_id = s.session_id WHERE o.server = 'session'`,
    );
    expect(Object.keys(session.client_capabilities).sort()).toEqual(['elicitation', 'roots', 'sampling']);
  });

  it("@InjectMcpToolset('inproc') gives a provider the mount's toolset: it delivers a tools/call in process, as the principal it names", async () => {
    const caller = server.app.get(InProcessCaller);
    expect(await caller.callTool('carol', 'whoami', {})).toEqual({
      jsonrpc: '2.0',
      id: 'inproc-whoami',
      result: { content: [{ type: 'text', text: '{"principal":"carol"}' }], structuredContent: { principal: 'carol' } },
    });
    expect(await caller.callTool('carol', 'ask_everything', {})).toMatchObject({ error: { code: -32602 } });
  });
});
