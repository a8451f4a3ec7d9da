import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { ModernTools } from '../fixtures/modern/modern-tools';
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
      imports: [McpModule.forRoot({ auth: fixtureAuth, stateless: { requestStateSecret: 'a-shared-secret-of-the-test-suite' } })],
      providers: [FixtureTools, ModernTools],
    });
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  async function connect(mode: Mode, asked: string[] = []): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
    });
    const client = new Client({ name: 'sdk2-e2e', version: '2.0.0' }, { capabilities: { elicitation: {}, roots: {} }, versionNegotiation: { mode } });
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(String(request.params.message));
      return { action: 'accept', content: { name: `name-${asked.length}` } };
    });
    client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
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
    expect(rows.map((row: { resultType: string }) => row.resultType)).toEqual(['input_required', 'input_required', 'input_required', 'complete']);
  });

  it('progress notifications reach the caller on the request stream', async () => {
    const { client } = await connect({ pin: '2026-07-28' });
    const seen: number[] = [];
    try {
      const result = await client.callTool({ name: 'work', arguments: {} }, { onprogress: (progress) => seen.push(progress.progress) });
      expect(result.content).toEqual([{ type: 'text', text: 'worked' }]);
      expect(seen).toEqual([1, 2]);
    } finally {
      await client.close();
    }
  });
});
