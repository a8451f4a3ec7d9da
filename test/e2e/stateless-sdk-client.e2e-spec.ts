import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { FeaturePrompts, FeatureResources, PIXEL_PNG } from '../fixtures/features/feature-providers';
import { StatelessTools } from '../fixtures/stateless/stateless-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

type Mode = 'auto' | { pin: string };

/**
 * The official SDK 2.x client, pinned to 2026-07-28 and in auto negotiation, against our
 * endpoint: listing, calling, a tool that elicits (answered through multi round-trip requests by
 * the client's handler), progress, and the rows stateless traffic leaves.
 */
describe('official SDK 2.x client against McpModule (2026-07-28, PostgreSQL)', () => {
  let db: TestDatabase;
  let server: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          stateless: { requestStateSecret: 'a-shared-secret-of-the-test-suite' },
        }),
      ],
      providers: [FixtureTools, StatelessTools, FeatureResources, FeaturePrompts],
    });
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  async function connect(
    mode: Mode,
    asked: string[] = [],
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
    });
    const client = new Client(
      { name: 'sdk2-e2e', version: '2.0.0' },
      { capabilities: { elicitation: {}, roots: {}, sampling: {} }, versionNegotiation: { mode } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(String(request.params.message));
      return { action: 'accept', content: { name: `name-${asked.length}` } };
    });
    client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
    client.setRequestHandler('sampling/createMessage', async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'hi from the model' },
      model: 'test-model',
      stopReason: 'endTurn',
    }));
    await client.connect(transport);
    return { client, transport };
  }

  it.each<[string, Mode]>([
    ['pinned to 2026-07-28', { pin: '2026-07-28' }],
    ['in auto negotiation', 'auto'],
  ])('%s: speaks the stateless revision, lists and calls tools, no session', async (_name, mode) => {
    const { client, transport } = await connect(mode);
    try {
      expect(transport.protocolVersion).toBe('2026-07-28');
      expect(transport.sessionId).toBeUndefined();
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'greet', 'work']));
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'hello 2026' } });
      expect(echoed.content).toEqual([{ type: 'text', text: 'hello 2026' }]);
      const failed = await client.callTool({ name: 'fail', arguments: {} });
      expect(failed.isError).toBe(true);
    } finally {
      await client.close();
    }
    const [{ n }] = await db.dataSource.query(`SELECT count(*)::int AS n FROM mcp_inbound_sessions`);
    expect(n).toBe(0);
  });

  it('a tool that elicits is answered by the client handler through input_required rounds', async () => {
    const asked: string[] = [];
    const { client } = await connect({ pin: '2026-07-28' }, asked);
    try {
      const greeted = await client.callTool({ name: 'greet', arguments: {} });
      expect(greeted.content).toEqual([{ type: 'text', text: 'Hello, name-1!' }]);
      const interviewed = await client.callTool({ name: 'interview', arguments: {} });
      expect(interviewed.content).toEqual([{ type: 'text', text: 'name-2 name-3 @ file:///work' }]);
      expect(asked).toEqual(['What is your name?', 'First name?', 'Last name?']);
    } finally {
      await client.close();
    }
    const rows = await db.dataSource.query(
      `SELECT response->'result'->>'resultType' AS "resultType" FROM mcp_events WHERE method = 'tools/call' AND request->'params'->>'name' = 'interview' ORDER BY created_at`,
    );
    expect(rows.map((row: { resultType: string }) => row.resultType)).toEqual([
      'input_required',
      'input_required',
      'input_required',
      'complete',
    ]);
  });

  it('progress notifications reach the caller on the request stream', async () => {
    const { client } = await connect({ pin: '2026-07-28' });
    const seen: number[] = [];
    try {
      const result = await client.callTool(
        { name: 'work', arguments: {} },
        { onprogress: (progress) => seen.push(progress.progress) },
      );
      expect(result.content).toEqual([{ type: 'text', text: 'worked' }]);
      expect(seen).toEqual([1, 2]);
    } finally {
      await client.close();
    }
  });

  it('a tool that samples is answered by the client model handler through an input_required round', async () => {
    const { client } = await connect({ pin: '2026-07-28' });
    try {
      const result = await client.callTool({ name: 'ask_model', arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: 'model said: hi from the model' }]);
    } finally {
      await client.close();
    }
  });

  it('lists and reads resources and templates, gets prompts and completes arguments on the stateless revision', async () => {
    const { client, transport } = await connect('auto');
    try {
      expect(transport.protocolVersion).toBe('2026-07-28');
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining(['docs://readme', 'images://pixel.png']));
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('users://{id}/profile');
      const readme = await client.readResource({ uri: 'docs://readme' });
      expect(readme.contents).toEqual([
        expect.objectContaining({ uri: 'docs://readme', mimeType: 'text/markdown', text: '# durable-mcp\n' }),
      ]);
      const pixel = await client.readResource({ uri: 'images://pixel.png' });
      expect(pixel.contents).toEqual([
        expect.objectContaining({ uri: 'images://pixel.png', blob: PIXEL_PNG.toString('base64') }),
      ]);
      const profile = await client.readResource({ uri: 'users://alice/profile' });
      expect(JSON.parse(String((profile.contents[0] as { text: string }).text))).toMatchObject({
        id: 'alice',
        name: 'Alice',
        viewer: 'alice',
      });
      await expect(client.readResource({ uri: 'users://nobody/profile' })).rejects.toMatchObject({ code: -32602 });

      const { prompts } = await client.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['code_review', 'show_pixel', 'translate']));
      const review = await client.getPrompt({ name: 'code_review', arguments: { code: 'x = 1', language: 'python' } });
      expect(review.messages[0]).toEqual({
        role: 'user',
        content: { type: 'text', text: 'Please review this python:\nx = 1' },
      });
      const shown = await client.getPrompt({ name: 'show_pixel', arguments: {} });
      expect(shown.messages.map((m) => m.content.type)).toEqual(['image', 'resource']);
      await expect(client.getPrompt({ name: 'code_review', arguments: {} })).rejects.toMatchObject({ code: -32602 });

      const completed = await client.complete({
        ref: { type: 'ref/prompt', name: 'code_review' },
        argument: { name: 'language', value: 'pyt' },
      });
      expect(completed.completion.values).toEqual(['python', 'pytorch']);
    } finally {
      await client.close();
    }
  });
});
