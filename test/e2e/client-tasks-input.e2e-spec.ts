import { McpClientModule, McpClientService, McpModule } from '../../src/mcp';
import { McpInputRequiredError } from '../../src/mcp/errors';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { TaskAskTools } from '../fixtures/tasks/task-ask-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** What the client's handlers were asked, in order: `<server> <method> <detail>`. */
const ASKED: string[] = [];

/**
 * `McpClientService.callTool(..., { task })` of a task that asks the client for input: the
 * client's own elicitation and sampling handlers answer it, on 2025-11-25 on the stream of a
 * `tasks/result` (the server's side channel), on 2026-07-28 with `tasks/update`. Our own server,
 * PostgreSQL, inline queue.
 */
describe('McpClientService answers the input requests of a task (own server, both revisions)', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let client: RunningApp;
  let bare: RunningApp;
  let mcp: McpClientService;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [TaskAskTools],
          stateless: { requestStateSecret: 'a-shared-secret-of-the-task-ask-suite' },
          tasks: { pollIntervalMs: 50 },
        }),
      ],
      providers: [TaskAskTools],
    });
    const url = `${server.baseUrl}/mcp`;
    client = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: {
            v25: { url, bearerToken: 'token-alice', version: '2025-11-25' },
            v26: { url, bearerToken: 'token-alice', version: '2026-07-28' },
          },
          handlers: {
            elicitation: (params, context) => {
              ASKED.push(`${context.server} ${context.method} ${String(params.message)}`);
              return { action: 'accept', content: { name: `Ada-${context.server}` } };
            },
            sampling: (params, context) => {
              const text = ((params.messages as { content: { text: string } }[])[0]?.content.text ?? '').replace(
                'Greet ',
                'hi ',
              );
              ASKED.push(`${context.server} ${context.method} ${text}`);
              return {
                role: 'assistant',
                content: { type: 'text', text },
                model: 'handler-model',
                stopReason: 'endTurn',
              };
            },
          },
        }),
      ],
    });
    mcp = client.app.get(McpClientService);
  });

  afterAll(async () => {
    await bare?.close();
    await client?.close();
    await server?.close();
    await db?.drop();
  });

  const taskRows = (tag: string): Promise<{ status: string; outcome: Record<string, unknown> | null }[]> =>
    db.dataSource.query(`SELECT status, outcome FROM mcp_tasks WHERE payload->'arguments'->>'tag' = $1`, [tag]);

  it.each([
    ['v25', 'tasks/result carries the requests'],
    ['v26', 'tasks/update answers them'],
  ])(
    '%s: the elicitation and sampling handlers answer the task, which completes with their answers (%s)',
    async (name) => {
      ASKED.length = 0;
      const result = await mcp.callTool(
        name,
        'ask_twice',
        { tag: `t-${name}` },
        { task: { ttlMs: 60_000 }, timeoutMs: 30_000 },
      );
      expect(result.isError).toBeUndefined();
      expect(result.content).toEqual([{ type: 'text', text: `t-${name}: accept Ada-${name} / hi Ada-${name} (task)` }]);
      // Each request answered once, in the order the handler asked them.
      expect(ASKED).toEqual([
        `${name} elicitation/create Name for t-${name}?`,
        `${name} sampling/createMessage hi Ada-${name}`,
      ]);
      expect((await taskRows(`t-${name}`)).map((row) => row.status)).toEqual(['completed']);
    },
  );

  it('v26: a request the handlers cannot answer cancels the task and fails the call with McpInputRequiredError', async () => {
    const refuse = () => {
      throw new Error('nobody at the keyboard');
    };
    bare = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: { v26: { url: `${server.baseUrl}/mcp`, bearerToken: 'token-alice', version: '2026-07-28' } },
          handlers: { elicitation: refuse, sampling: refuse },
        }),
      ],
    });
    const call = bare.app
      .get(McpClientService)
      .callTool('v26', 'ask_twice', { tag: 't-bare' }, { task: { ttlMs: 60_000 }, timeoutMs: 30_000 });
    await expect(call).rejects.toBeInstanceOf(McpInputRequiredError);
    await expect(call).rejects.toThrow('nobody at the keyboard');
    const rows = await pollUntil('the task cancelled', async () => {
      const found = await taskRows('t-bare');
      return found.length && found[0].status === 'cancelled' ? found : undefined;
    });
    expect(rows).toHaveLength(1);
  });
});
