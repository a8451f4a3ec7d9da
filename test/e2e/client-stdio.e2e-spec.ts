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
            // Used by one test only, so the rows and the session it reads are its own. Pinned: the
            // revision verdict is kept per endpoint (the same argv as 'pooled'), so with 'auto' the
            // probe would happen here or not depending on which test ran first.
            catalog: {
              command: everythingServer(),
              version: '2025-11-25',
              stateless: true,
              pool: { max: 2, idleMs: 30_000 },
            },
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
    const prompts = await client.listPrompts('catalog');
    expect(prompts.map((p) => p.name)).toEqual([
      'simple-prompt',
      'args-prompt',
      'completable-prompt',
      'resource-prompt',
    ]);
    const resources = await client.listResources('catalog');
    expect(resources).toHaveLength(7);
    expect(resources[0]).toMatchObject({ uri: 'demo://resource/static/document/architecture.md' });
    const read = await client.readResource('catalog', String(resources[0].uri));
    expect(read.contents).toEqual([
      {
        uri: 'demo://resource/static/document/architecture.md',
        mimeType: 'text/markdown',
        text: expect.stringContaining('# Everything Server'),
      },
    ]);
    const templates = await client.listResourceTemplates('catalog');
    expect(templates.map((t) => t.uriTemplate)).toEqual([
      'demo://resource/dynamic/text/{resourceId}',
      'demo://resource/dynamic/blob/{resourceId}',
    ]);
    await client.setLogLevel('catalog', 'error');
    await client.ping('catalog');
    // One outbound row per exchange, in order: each request of this test (the first one's own
    // handshake learned the capabilities).
    const rows = await db.dataSource.query(
      `SELECT method FROM mcp_events WHERE direction = 'outbound' AND server = 'catalog' ORDER BY created_at`,
    );
    expect(rows.map((r: { method: string }) => r.method)).toEqual([
      'prompts/list',
      'resources/list',
      'resources/read',
      'resources/templates/list',
      'logging/setLevel',
      'ping',
    ]);
    const [session] = await db.dataSource.query(`SELECT * FROM mcp_outbound_sessions WHERE server = 'catalog'`);
    expect(session).toMatchObject({
      protocol_version: '2025-11-25',
      server_info: { name: 'mcp-servers/everything' },
      server_capabilities: {
        tools: expect.any(Object),
        prompts: expect.any(Object),
        resources: expect.any(Object),
        logging: {},
        completions: {},
      },
    });
  });
});
