import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  McpError,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { TASK_RUNS, TaskGates, TaskTools } from '../fixtures/tasks/task-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

describe('tasks (2025-11-25 experimental) on one replica, tasks in process (PostgreSQL)', () => {
  let db: TestDatabase;
  let server: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [TaskTools],
          advanced: { pageSize: 2 },
          tasks: { pollIntervalMs: 50 },
        }),
        McpModule.forRoot({ mount: 'plain', path: '/plain/mcp', auth: fixtureAuth, providers: [FixtureTools] }),
      ],
      providers: [TaskTools, FixtureTools],
    });
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  async function connect(token = 'token-alice', path = '/mcp') {
    const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}${path}`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client(
      { name: 'e2e-tasks', version: '1.0.0' },
      { capabilities: { tasks: { list: {}, cancel: {} } } },
    );
    const statuses: { taskId: string; status: string; statusMessage?: string }[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      statuses.push(notification.params);
    });
    await client.connect(transport);
    return { client, transport, statuses };
  }

  async function createTask(client: Client, name: string, args: Record<string, unknown>, ttl = 60_000) {
    const created = await client.request(
      { method: 'tools/call', params: { name, arguments: args, task: { ttl } } },
      CreateTaskResultSchema,
    );
    return created.task;
  }

  it('declares the tasks capability and publishes each tool task support', async () => {
    const { client } = await connect();
    expect(client.getServerCapabilities()?.tasks).toEqual(TASKS_CAPABILITY);
    const first = await client.listTools();
    const tools = [...first.tools];
    for (let cursor = first.nextCursor; cursor;) {
      const page = await client.listTools({ cursor });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    }
    expect(Object.fromEntries(tools.map((tool) => [tool.name, tool.execution ?? null]))).toEqual({
      report: { taskSupport: 'optional' },
      hang: { taskSupport: 'optional' },
      broken: { taskSupport: 'optional' },
      only_task: { taskSupport: 'required' },
      plain: null,
    });
    await client.close();
  });

  it('a mount without a tool that allows tasks declares no tasks capability, answers tasks/* -32601 and runs params.task calls at once', async () => {
    const { client } = await connect('token-alice', '/plain/mcp');
    expect(client.getServerCapabilities()).toEqual({ logging: {}, tools: { listChanged: true } });
    expect(
      await client
        .request({ method: 'tasks/get', params: { taskId: 'x' } }, GetTaskResultSchema)
        .catch((e: unknown) => e),
    ).toMatchObject({ code: -32601, message: 'MCP error -32601: Method not found: tasks/get' });
    expect(
      await client.request(
        { method: 'tools/call', params: { name: 'echo', arguments: { text: 'now' }, task: { ttl: 1000 } } },
        CallToolResultSchema,
      ),
    ).toEqual({ content: [{ type: 'text', text: 'now' }] });
    await client.close();
  });

  it('creates a task at once, serves its status and progress, and answers its result', async () => {
    const { client, statuses } = await connect();
    const task = await createTask(client, 'report', { gate: 'basic' });
    expect(task).toEqual({
      taskId: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      status: 'working',
      createdAt: expect.any(String),
      lastUpdatedAt: expect.any(String),
      ttl: 60_000,
      pollInterval: 50,
    });

    const stepOne = await pollUntil('step 1', async () => {
      const current = await client.experimental.tasks.getTask(task.taskId);
      return current.statusMessage === 'step 1 of 2' ? current : undefined;
    });
    expect(stepOne).toMatchObject({ taskId: task.taskId, status: 'working', ttl: 60_000, pollInterval: 50 });
    await pollUntil('the status notification of step 1', () =>
      statuses.find((s) => s.taskId === task.taskId && s.statusMessage === 'step 1 of 2'),
    );

    TaskGates.open('basic');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result).toEqual({
      content: [{ type: 'text', text: 'report basic for alice (task yes)' }],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } },
    });
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({
      taskId: task.taskId,
      status: 'completed',
      statusMessage: 'step 2 of 2',
    });
    await pollUntil('the completed notification', () =>
      statuses.find((s) => s.taskId === task.taskId && s.status === 'completed'),
    );
    expect(TASK_RUNS.get('basic')).toEqual({ runs: 1, aborted: null });

    const [row] = await db.dataSource.query(
      `SELECT tool_name, status, principal_key, session_id IS NOT NULL AS has_session, arguments_digest, payload->'arguments' AS args, attempt FROM mcp_tasks WHERE id = $1`,
      [task.taskId],
    );
    expect(row).toEqual({
      tool_name: 'report',
      status: 'completed',
      principal_key: 'alice',
      has_session: true,
      arguments_digest: expect.stringMatching(/^[0-9a-f]{64}$/),
      args: { gate: 'basic' },
      attempt: 1,
    });
    const events = await db.dataSource.query(
      `SELECT request->>'transition' AS transition FROM mcp_events WHERE kind = 'task' AND request->>'taskId' = $1 ORDER BY created_at, id`,
      [task.taskId],
    );
    expect(events.map((e: { transition: string }) => e.transition).sort()).toEqual(
      ['completed', 'created', 'message', 'message', 'started'].sort(),
    );
    await client.close();
  });

  it('a failing tool ends the task failed, and tasks/result answers the isError result', async () => {
    const { client } = await connect();
    const task = await createTask(client, 'broken', { gate: 'broken-1' });
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result).toEqual({
      content: [{ type: 'text', text: 'broken broken-1' }],
      isError: true,
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } },
    });
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({
      status: 'failed',
      statusMessage: 'broken broken-1',
    });
    await client.close();
  });

  it('cancels a running task: the handler signal fires, the status is cancelled, the result is the cancelled error', async () => {
    const { client } = await connect();
    const task = await createTask(client, 'hang', { gate: 'cancel-1' });
    await pollUntil('the handler running', async () =>
      (await client.experimental.tasks.getTask(task.taskId)).statusMessage === 'hanging' ? true : undefined,
    );
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled).toMatchObject({
      taskId: task.taskId,
      status: 'cancelled',
      statusMessage: 'The task was cancelled by request',
    });
    await pollUntil('the abort seen by the handler', () => TASK_RUNS.get('cancel-1')?.aborted ?? undefined);
    expect(TASK_RUNS.get('cancel-1')).toEqual({ runs: 1, aborted: 'The task was cancelled' });
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({ status: 'cancelled' });
    const error = await client.experimental.tasks
      .getTaskResult(task.taskId, CallToolResultSchema)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: -32603, message: `MCP error -32603: Task ${task.taskId} was cancelled` });
    const again = await client.experimental.tasks.cancelTask(task.taskId).catch((e: unknown) => e);
    expect(again).toMatchObject({
      code: -32602,
      message: "MCP error -32602: Cannot cancel task: already in terminal status 'cancelled'",
    });
    await client.close();
  });

  it('lists only the caller tasks, paginated; another principal task id answers like an unknown id', async () => {
    const bob = await connect('token-bob');
    const bobTasks: { taskId: string }[] = [];
    for (const gate of ['bob-1', 'bob-2', 'bob-3']) bobTasks.push(await createTask(bob.client, 'broken', { gate }));
    await Promise.all(
      bobTasks.map((task) => bob.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)),
    );

    const first = await bob.client.experimental.tasks.listTasks();
    expect(first.tasks).toHaveLength(2);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await bob.client.experimental.tasks.listTasks(first.nextCursor);
    expect(second.nextCursor).toBeUndefined();
    expect([...first.tasks, ...second.tasks].map((task) => task.taskId).sort()).toEqual(
      bobTasks.map((task) => task.taskId).sort(),
    );

    const alice = await connect('token-alice');
    const aliceIds = (await alice.client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId);
    for (const task of bobTasks) expect(aliceIds).not.toContain(task.taskId);
    const foreign = await alice.client.experimental.tasks.getTask(bobTasks[0].taskId).catch((e: unknown) => e);
    const unknown = await alice.client.experimental.tasks.getTask('no-such-task').catch((e: unknown) => e);
    expect(foreign).toMatchObject({
      code: -32602,
      message: 'MCP error -32602: Failed to retrieve task: Task not found',
    });
    expect(unknown).toMatchObject({ code: (foreign as McpError).code, message: (foreign as McpError).message });
    for (const call of [
      () => alice.client.experimental.tasks.getTaskResult(bobTasks[0].taskId),
      () => alice.client.experimental.tasks.cancelTask(bobTasks[0].taskId),
    ]) {
      expect(await call().catch((e: unknown) => e)).toMatchObject({
        code: -32602,
        message: 'MCP error -32602: Failed to retrieve task: Task not found',
      });
    }
    await bob.client.close();
    await alice.client.close();
  });

  it('refuses a forbidden tool called as a task and a required one called without, with -32601', async () => {
    const { client } = await connect();
    const forbidden = await client
      .request(
        { method: 'tools/call', params: { name: 'plain', arguments: {}, task: { ttl: 1000 } } },
        CreateTaskResultSchema,
      )
      .catch((e: unknown) => e);
    expect(forbidden).toMatchObject({
      code: -32601,
      message: 'MCP error -32601: Tool "plain" cannot be called as a task',
    });
    const required = await client
      .request({ method: 'tools/call', params: { name: 'only_task', arguments: {} } }, CallToolResultSchema)
      .catch((e: unknown) => e);
    expect(required).toMatchObject({
      code: -32601,
      message: 'MCP error -32601: Tool "only_task" must be called as a task (params.task)',
    });
    const task = await createTask(client, 'only_task', {});
    expect(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).toMatchObject({
      content: [{ type: 'text', text: 'ran as a task' }],
    });
    await client.close();
  });

  it('serves an expired task as unknown', async () => {
    const { client } = await connect();
    const task = await createTask(client, 'broken', { gate: 'expiring' });
    await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    await db.dataSource.query(`UPDATE mcp_tasks SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      task.taskId,
    ]);
    expect(await client.experimental.tasks.getTask(task.taskId).catch((e: unknown) => e)).toMatchObject({
      code: -32602,
      message: 'MCP error -32602: Failed to retrieve task: Task not found',
    });
    expect((await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).not.toContain(task.taskId);
    await client.close();
  });
});
