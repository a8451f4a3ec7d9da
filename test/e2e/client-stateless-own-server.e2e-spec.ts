import { McpClientModule, McpModule, McpClientService } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { StatelessTools } from '../fixtures/stateless/stateless-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const STATELESS = '2026-07-28';

/** Our client against our own endpoint on 2026-07-28: negotiated, stateless, with input_required rounds. */
describe('McpClientService against McpModule on 2026-07-28', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let client: RunningApp;
  let bare: RunningApp;
  const asked: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          stateless: { requestStateSecret: 'a-shared-secret-of-the-test-suite' },
        }),
      ],
      providers: [FixtureTools, StatelessTools],
    });
    client = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: { own: { url: `${server.baseUrl}/mcp`, bearerToken: 'token-alice' } },
          handlers: {
            elicitation: (params) => {
              asked.push(String(params.message));
              return { action: 'accept', content: { name: asked.length === 1 ? 'Ada' : 'Lovelace' } };
            },
            roots: () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }),
          },
        }),
      ],
    });
    // No app-wide handlers: only a call's own onServerRequest answers.
    bare = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: { own: { url: `${server.baseUrl}/mcp`, bearerToken: 'token-alice' } },
        }),
      ],
    });
  });

  afterAll(async () => {
    await bare?.close();
    await client?.close();
    await server?.close();
    await db?.drop();
  });

  it('negotiates the stateless revision, calls tools, and answers elicitation and roots through input_required rounds', async () => {
    const mcp = client.app.get(McpClientService);
    expect(await mcp.callTool('own', 'echo', { text: 'stateless' })).toMatchObject({
      content: [{ type: 'text', text: 'stateless' }],
    });
    const result = await mcp.callTool('own', 'interview', {});
    expect(result.content).toEqual([{ type: 'text', text: 'Ada Lovelace @ file:///work' }]);
    expect(asked).toEqual(['First name?', 'Last name?']);

    const outbound = await db.dataSource.query(
      `SELECT method, protocol_version, request FROM mcp_events WHERE direction = 'outbound' AND server = 'own' ORDER BY created_at`,
    );
    expect(outbound[0].method).toBe('server/discover');
    expect(outbound.every((e: { protocol_version: string }) => e.protocol_version === STATELESS)).toBe(true);
    // One row per exchange: echo once; interview once per round (first name, last name, roots,
    // then the answer).
    const calls = outbound
      .filter((e: { method: string }) => e.method === 'tools/call')
      .map((e: { request: { params: { name: string } } }) => e.request.params.name);
    expect(calls).toEqual(['echo', 'interview', 'interview', 'interview', 'interview']);
    expect(await db.dataSource.query(`SELECT id FROM mcp_inbound_sessions`)).toEqual([]);
    const [row] = await db.dataSource.query(
      `SELECT protocol_version, remote_session_id FROM mcp_outbound_sessions WHERE server = 'own'`,
    );
    expect(row).toEqual({ protocol_version: STATELESS, remote_session_id: null });
  });

  it("announces a call's own onServerRequest in its requests' capabilities, and answers the rounds with it", async () => {
    const mcp = bare.app.get(McpClientService);
    const seen: string[] = [];
    const result = await mcp.callTool(
      'own',
      'interview',
      {},
      {
        onServerRequest: async ({ method, params }) => {
          seen.push(method === 'elicitation/create' ? `${method} ${String(params.message)}` : method);
          if (method === 'roots/list') return { roots: [{ uri: 'file:///own', name: 'own' }] };
          return { action: 'accept', content: { name: params.message === 'First name?' ? 'Grace' : 'Hopper' } };
        },
      },
    );
    expect(result.content).toEqual([{ type: 'text', text: 'Grace Hopper @ file:///own' }]);
    expect(seen).toEqual(['elicitation/create First name?', 'elicitation/create Last name?', 'roots/list']);
    // Without it, the same client announces nothing, and the server cannot ask.
    const refused = await mcp.callTool('own', 'interview', {}).catch((error: unknown) => error as Error);
    expect(refused).toBeInstanceOf(Error);
    expect(refused.message).toMatch(/capabilit/i);
  });
});
