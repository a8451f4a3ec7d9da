import { McpClientModule, McpClientService } from '../../src/mcp';
import { FixtureSamplingHandler } from '../fixtures/client/sampling-handler';
import { everythingServer } from '../fixtures/stdio/stdio-test-kit';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

jest.setTimeout(60_000);

function texts(result: Record<string, unknown>): string {
  return ((result.content as Array<{ text?: string }>) ?? []).map((c) => c.text ?? '').join('\n');
}

describe('McpClientService against @modelcontextprotocol/server-everything over stdio', () => {
  let db: TestDatabase;
  let app: RunningApp;
  let client: McpClientService;

  beforeAll(async () => {
    db = await createTestDatabase();
    const [program, ...args] = everythingServer();
    app = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: {
            everything: { command: program, args },
            pooled: { command: everythingServer(), stateless: true, pool: { max: 2, idleMs: 30_000 } },
          },
        }),
      ],
      providers: [FixtureSamplingHandler],
    });
    client = app.app.get(McpClientService);
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('lists and calls tools, spawn-per-call and pooled', async () => {
    const tools = (await client.listTools('everything')).map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['echo', 'trigger-sampling-request']));
    expect(texts(await client.callTool('everything', 'echo', { message: 'hi' }))).toContain('hi');
    expect(texts(await client.callTool('pooled', 'echo', { message: 'warm' }))).toContain('warm');
  });

  it('answers the server sampling request with the decorated handler', async () => {
    const result = await client.callTool('everything', 'trigger-sampling-request', { prompt: 'hello' });
    expect(result.isError).toBeFalsy();
    expect(JSON.stringify(result.content)).toContain('model says hi to everything');
    expect(app.app.get(FixtureSamplingHandler).asked).toContain('everything');
  });

  it('uses prompts, resources, completions and logging the server declared', async () => {
    const prompts = await client.listPrompts('pooled');
    expect(prompts.length).toBeGreaterThan(0);
    const resources = await client.listResources('pooled');
    expect(resources.length).toBeGreaterThan(0);
    const read = await client.readResource('pooled', String(resources[0].uri));
    expect(Array.isArray(read.contents)).toBe(true);
    await client.listResourceTemplates('pooled');
    await client.setLogLevel('pooled', 'error');
    await client.ping('pooled');
    const rows = await db.dataSource.query(`SELECT method FROM mcp_events WHERE direction = 'outbound' AND server = 'pooled'`);
    expect(rows.map((r: { method: string }) => r.method)).toEqual(expect.arrayContaining(['prompts/list', 'resources/read', 'logging/setLevel', 'ping']));
    const [session] = await db.dataSource.query(`SELECT * FROM mcp_outbound_sessions WHERE server = 'everything'`);
    expect(session.server_capabilities).toMatchObject({ tools: expect.any(Object), prompts: expect.any(Object) });
  });
});
