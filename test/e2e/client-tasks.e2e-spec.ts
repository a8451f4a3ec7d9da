import { McpClientModule, McpClientService, McpModule } from '../../src/mcp';
import { McpCallAbortedError, McpTaskNotSupportedError } from '../../src/mcp/errors';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { ClientTaskTools } from '../fixtures/client/client-task-tools';
import { TASK_RUNS, TaskGates, TaskTools } from '../fixtures/tasks/task-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const EXTENSION = 'io.modelcontextprotocol/tasks';

type Row = {
  method: string;
  request: { params?: Record<string, unknown> };
  response: { result?: Record<string, unknown> } | null;
};

/** `McpClientService.callTool(..., { task })` against our own server, on 2025-11-25 and on 2026-07-28 (inline queue). */
describe('McpClientService calls tools as tasks (own server, both revisions)', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let client: RunningApp;
  let mcp: McpClientService;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [TaskTools, ClientTaskTools],
          stateless: { requestStateSecret: 'a-shared-secret-of-the-client-task-suite' },
          tasks: { pollIntervalMs: 50 },
        }),
      ],
      providers: [TaskTools, ClientTaskTools],
    });
    client = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: {
            v25: { url: `${server.baseUrl}/mcp`, bearerToken: 'token-alice', version: '2025-11-25' },
            v26: { url: `${server.baseUrl}/mcp`, bearerToken: 'token-alice', version: '2026-07-28' },
          },
        }),
      ],
    });
    mcp = client.app.get(McpClientService);
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
    await db?.drop();
  });

  async function outbound(server: string): Promise<Row[]> {
    return db.dataSource.query(
      `SELECT method, request, response FROM mcp_events WHERE direction = 'outbound' AND server = $1 ORDER BY created_at, id`,
      [server],
    );
  }

  /** The rows of the exchanges of one gate's call: its tools/call, then those naming its task. */
  async function callRows(server: string, gate: string): Promise<Row[]> {
    const rows = await outbound(server);
    const call = rows.find(
      (row) =>
        row.method === 'tools/call' && (row.request.params?.arguments as { gate?: string } | undefined)?.gate === gate,
    );
    if (!call) return [];
    const result = call.response?.result ?? {};
    const taskId = ((result.task as { taskId?: string } | undefined) ?? result).taskId;
    return [call, ...rows.filter((row) => row.method.startsWith('tasks/') && row.request.params?.taskId === taskId)];
  }

  const methods = (rows: Row[]) => [...new Set(rows.map((row) => row.method))];

  /** The id of the task a tools/call row created (`{ task }` on 2025-11-25, inline on 2026-07-28). */
  function taskIdOf(row: Row): string {
    const result = row.response?.result ?? {};
    return String(((result.task as { taskId?: string } | undefined) ?? result).taskId);
  }

  /** The tool's result as the call returns it: on 2025-11-25 tasks/result ties it to its task in `_meta`. */
  function resultOf(name: string, text: string, taskId: string): Record<string, unknown> {
    const content = [{ type: 'text', text }];
    return name === 'v25' ? { content, _meta: { 'io.modelcontextprotocol/related-task': { taskId } } } : { content };
  }

  it.each(['v25', 'v26'])(
    '%s: callTool with { task } creates a task, polls it until completed and returns the tool result; the tool ran once',
    async (name) => {
      const gate = `done-${name}`;
      const progress: number[] = [];
      const call = mcp.callTool(
        name,
        'report',
        { gate },
        { task: { ttlMs: 60_000 }, onProgress: (p) => progress.push(p.progress) },
      );
      await pollUntil('a tasks/get of the call', async () =>
        (await callRows(name, gate)).some((row) => row.method === 'tasks/get') ? true : undefined,
      );
      TaskGates.open(gate);
      const result = await call;
      expect(TASK_RUNS.get(gate)).toEqual({ runs: 1, aborted: null });
      const rows = await callRows(name, gate);
      const taskId = taskIdOf(rows[0]);
      expect(result).toEqual(resultOf(name, `report ${gate} for alice (task yes)`, taskId));
      expect(rows.filter((row) => row.method === 'tools/call')).toHaveLength(1);
      expect(methods(rows)).toEqual(
        name === 'v25' ? ['tools/call', 'tasks/get', 'tasks/result'] : ['tools/call', 'tasks/get'],
      );
      if (name === 'v25') expect(rows[0].request.params?.task).toEqual({ ttl: 60_000 });
      else {
        expect(rows[0].request.params?.task).toBeUndefined();
        const capabilities = (rows[0].request.params?._meta as Record<string, { extensions?: unknown }>)[
          'io.modelcontextprotocol/clientCapabilities'
        ];
        expect(capabilities.extensions).toEqual({ [EXTENSION]: {} });
        expect(rows[0].response?.result?.resultType).toBe('task');
      }
      // The last tasks/get saw the task completed.
      const lastGet = rows.filter((row) => row.method === 'tasks/get').at(-1);
      expect((lastGet?.response?.result as { status?: string }).status).toBe('completed');
      expect(await db.dataSource.query(`SELECT status, tool_name FROM mcp_tasks WHERE id = $1`, [taskId])).toEqual([
        { status: 'completed', tool_name: 'report' },
      ]);
      // Progress of a task may reach the client only on 2025 (on the POST stream before the
      // CreateTaskResult, or not at all): whatever arrived carried the call's token.
      expect(progress.every((value) => value === 1)).toBe(true);
    },
  );

  it.each(['v25', 'v26'])(
    '%s: aborting the signal of a task-backed call sends tasks/cancel, aborts the handler and rejects with McpCallAbortedError (delivered)',
    async (name) => {
      const gate = `abort-${name}`;
      const controller = new AbortController();
      const call = mcp
        .callTool(name, 'hang', { gate }, { task: {}, signal: controller.signal })
        .catch((error: unknown) => error);
      await pollUntil('a tasks/get of the call', async () =>
        (await callRows(name, gate)).some((row) => row.method === 'tasks/get') ? true : undefined,
      );
      expect(TASK_RUNS.get(gate)?.runs).toBe(1);
      controller.abort('the user left');
      const error = await call;
      expect(error).toBeInstanceOf(McpCallAbortedError);
      expect(error).toMatchObject({ server: name, method: 'tools/call', delivered: true, reason: 'the user left' });
      const rows = await callRows(name, gate);
      expect(rows.filter((row) => row.method === 'tasks/cancel')).toHaveLength(1);
      expect(methods(rows)).toEqual(['tools/call', 'tasks/get', 'tasks/cancel']);
      await pollUntil('the handler saw the abort', () => (TASK_RUNS.get(gate)?.aborted ? true : undefined));
      expect(
        await db.dataSource.query(`SELECT status, tool_name FROM mcp_tasks WHERE id = $1`, [taskIdOf(rows[0])]),
      ).toEqual([{ status: 'cancelled', tool_name: 'hang' }]);
    },
  );

  it.each(['v25', 'v26'])(
    '%s: a call returned by id (wait: false) is pending while its task runs, then getCallResult and waitForCall give the result',
    async (name) => {
      const gate = `later-${name}`;
      const id = await mcp.callTool(name, 'report', { gate }, { task: {}, wait: false });
      await pollUntil('a tasks/get of the call', async () =>
        (await callRows(name, gate)).some((row) => row.method === 'tasks/get') ? true : undefined,
      );
      expect(await mcp.getCallResult(id)).toEqual({ id, state: 'pending' });
      TaskGates.open(gate);
      const expected = resultOf(name, `report ${gate} for alice (task yes)`, taskIdOf((await callRows(name, gate))[0]));
      expect(await mcp.waitForCall(id)).toEqual(expected);
      expect(await mcp.getCallResult(id)).toEqual({ id, state: 'completed', result: expected });
    },
  );

  it.each(['v25', 'v26'])(
    '%s: a tool published with taskSupport "forbidden" is refused with McpTaskNotSupportedError before anything is sent',
    async (name) => {
      const before = (await outbound(name)).filter((row) => row.method === 'tools/call').length;
      const error = await mcp.callTool(name, 'no_task', {}, { task: {} }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpTaskNotSupportedError);
      expect(error).toMatchObject({ server: name, tool: 'no_task', delivered: false });
      expect((await outbound(name)).filter((row) => row.method === 'tools/call')).toHaveLength(before);
      expect(await mcp.callTool(name, 'no_task', {})).toEqual({ content: [{ type: 'text', text: 'not a task' }] });
    },
  );

  it.each(['v25', 'v26'])(
    '%s: a tool whose cached definition says "required" runs as a task without the option',
    async (name) => {
      await mcp.listTools(name);
      const result = await mcp.callTool(name, 'only_task', {});
      const rows = await outbound(name);
      const call = rows.filter((row) => row.method === 'tools/call' && row.request.params?.name === 'only_task');
      expect(call).toHaveLength(1);
      expect(result).toEqual(resultOf(name, 'ran as a task', taskIdOf(call[0])));
      if (name === 'v25') expect(call[0].request.params?.task).toEqual({});
      else expect(call[0].response?.result?.resultType).toBe('task');
    },
  );
});
