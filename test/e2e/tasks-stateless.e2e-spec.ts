import { randomBytes } from 'node:crypto';
import { McpModule } from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { routingHeaders, statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { SseReader } from '../fixtures/sse/sse-reader';
import { startTaskReplica } from '../fixtures/tasks/task-replica';
import { TASK_REPLICAS, TASK_RUNS, TaskGates } from '../fixtures/tasks/task-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { MCP_ACCEPT } from '../support/mcp-wire';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys } from '../support/redis';

const EXTENSION = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { extensions: { [EXTENSION]: {} } };
const SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * The tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`) on the wire, two replicas
 * on one PostgreSQL and one Redis: A creates tasks and runs none (`concurrency: 0`), B consumes
 * the Bull queue. Every request is a raw stateless POST as the extension's text spells it.
 */
describe('tasks extension (2026-07-28, PostgreSQL + Redis, two replicas)', () => {
  let db: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;
  let plain: RunningApp;
  const readers: SseReader[] = [];
  const suffix = randomBytes(6).toString('hex');
  const channelPrefix = `tasks26-e2e-${suffix}`;
  const queueName = `tasks26-e2e-${suffix}`;

  const boot = (replica: string, concurrency: number) =>
    startTaskReplica(db.url, replica, concurrency, { channelPrefix, queueName });

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await boot('A', 0);
    b = await boot('B', 2);
    plain = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          stateless: { requestStateSecret: 'a-shared-secret-of-the-task-suite' },
        }),
      ],
    });
  });

  afterAll(async () => {
    await Promise.all(readers.map((reader) => reader.cancel().catch(() => undefined)));
    await a?.close().catch(() => undefined);
    await b?.close().catch(() => undefined);
    await plain?.close().catch(() => undefined);
    await deleteRedisKeys(`${channelPrefix}*`, `bull:${queueName}*`);
    await db?.drop();
  });

  let nextId = 1;
  const call = (
    app: RunningApp,
    method: string,
    params: Record<string, unknown>,
    capabilities: Record<string, unknown> = WITH_TASKS,
    token = 'token-alice',
  ) => {
    const body = statelessRequest(nextId++, method, params, capabilities);
    const headers: Record<string, string> = typeof params.taskId === 'string' ? { 'Mcp-Name': params.taskId } : {};
    return statelessPost(`${app.baseUrl}/mcp`, body, { token, headers });
  };
  const create = async (app: RunningApp, name: string, gate: string) => {
    const reply = await call(app, 'tools/call', { name, arguments: { gate } });
    expect(reply.status).toBe(200);
    return reply.json.result as Record<string, unknown> & { taskId: string };
  };
  const getTask = async (app: RunningApp, taskId: string) =>
    (await call(app, 'tasks/get', { taskId })).json.result as Record<string, unknown>;

  it('server/discover names the extension only on a mount with a tool that allows tasks', async () => {
    const withTasks = (await call(a, 'server/discover', {})).json.result;
    expect(withTasks.capabilities.extensions).toEqual({ [EXTENSION]: {} });
    expect(withTasks.capabilities.tasks).toBeUndefined();
    const without = (await call(plain, 'server/discover', {})).json.result;
    expect(without.capabilities.extensions).toBeUndefined();
    expect(without.capabilities.tasks).toBeUndefined();
  });

  it('tools/call answers resultType task on A, the task runs on B, and tasks/get on B then A polls it to completed with the result', async () => {
    const task = await create(a, 'report', 't26-report');
    expect(Object.keys(task).sort()).toEqual([
      '_meta',
      'createdAt',
      'lastUpdatedAt',
      'pollIntervalMs',
      'resultType',
      'status',
      'taskId',
      'ttlMs',
    ]);
    expect(task).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 3_600_000, pollIntervalMs: 50 });
    expect(task.createdAt).toMatch(ISO);
    expect((task._meta as Record<string, unknown>)[SERVER_INFO]).toBeDefined();

    await pollUntil('step 1 on B', async () =>
      (await getTask(b, task.taskId)).statusMessage === 'step 1 of 2' ? true : undefined,
    );
    expect(TASK_REPLICAS.get('t26-report')).toEqual(['B']);
    const working = await getTask(b, task.taskId);
    expect(working).toMatchObject({
      resultType: 'complete',
      taskId: task.taskId,
      status: 'working',
      statusMessage: 'step 1 of 2',
    });
    expect(working.result).toBeUndefined();

    TaskGates.open('t26-report');
    const done = await pollUntil('the task completed', async () => {
      const current = await getTask(a, task.taskId);
      return current.status === 'completed' ? current : undefined;
    });
    expect(done).toMatchObject({
      resultType: 'complete',
      taskId: task.taskId,
      status: 'completed',
      ttlMs: 3_600_000,
      pollIntervalMs: 50,
    });
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'report t26-report for alice (task yes)' }] });
    expect(TASK_RUNS.get('t26-report')).toEqual({ runs: 1, aborted: null });
  });

  it('a tool error completes the task with isError (failed is for JSON-RPC errors only)', async () => {
    const task = await create(a, 'broken', 't26-broken');
    const done = await pollUntil('the task ended', async () => {
      const current = await getTask(b, task.taskId);
      return current.status === 'working' ? undefined : current;
    });
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: expect.stringContaining('broken t26-broken') }],
    });
  });

  it('tasks/cancel sent to A acknowledges with an empty result and aborts the handler running on B', async () => {
    const task = await create(a, 'hang', 't26-cancel');
    await pollUntil('the handler running on B', async () =>
      (await getTask(a, task.taskId)).statusMessage === 'hanging' ? true : undefined,
    );
    const ack = await call(a, 'tasks/cancel', { taskId: task.taskId });
    expect(ack.status).toBe(200);
    expect(Object.keys(ack.json.result).sort()).toEqual(['_meta', 'resultType']);
    expect(ack.json.result.resultType).toBe('complete');
    await pollUntil('the abort on B', () => TASK_RUNS.get('t26-cancel')?.aborted ?? undefined);
    expect(TASK_RUNS.get('t26-cancel')).toEqual({ runs: 1, aborted: 'The task was cancelled' });
    expect(await getTask(b, task.taskId)).toMatchObject({
      status: 'cancelled',
      statusMessage: 'The task was cancelled by request',
    });
    expect((await getTask(b, task.taskId)).error).toBeUndefined();
  });

  it("another principal's task id, and an unknown one, answer -32602 task not found", async () => {
    const task = await create(a, 'report', 't26-owner');
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const reply = await call(b, method, { taskId: task.taskId }, WITH_TASKS, 'token-bob');
      expect(reply.json.error).toEqual({ code: -32602, message: 'Failed to retrieve task: Task not found' });
    }
    expect((await call(a, 'tasks/get', { taskId: 'no-such-task' })).json.error).toEqual({
      code: -32602,
      message: 'Failed to retrieve task: Task not found',
    });
    expect((await getTask(a, task.taskId)).status).toBe('working');
    TaskGates.open('t26-owner');
  });

  it('without the extension: a required tool, tasks/get and a task listen answer -32021 naming it; an optional tool runs inline', async () => {
    const required = { code: -32021, data: { requiredCapabilities: { extensions: { [EXTENSION]: {} } } } };
    const onlyTask = await call(a, 'tools/call', { name: 'only_task', arguments: {} }, {});
    expect(onlyTask.status).toBe(400);
    expect(onlyTask.json.error).toMatchObject(required);
    const task = await create(a, 'only_task', 'unused');
    expect((await call(a, 'tasks/get', { taskId: task.taskId }, {})).json.error).toMatchObject(required);
    const listenBody = statelessRequest(
      nextId++,
      'subscriptions/listen',
      { notifications: { taskIds: [task.taskId] } },
      {},
    );
    const listen = await statelessPost(`${a.baseUrl}/mcp`, listenBody, { token: 'token-alice' });
    expect(listen.json.error).toMatchObject(required);

    TaskGates.open('t26-inline');
    const inline = await call(a, 'tools/call', { name: 'report', arguments: { gate: 't26-inline' } }, {});
    expect(inline.json.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'report t26-inline for alice (task no)' }],
    });
  });

  it('tasks/update on a task waiting for no input acknowledges and ignores the responses; malformed inputResponses is -32602', async () => {
    const task = await create(a, 'only_task', 'unused');
    const ack = await call(a, 'tasks/update', {
      taskId: task.taskId,
      inputResponses: { name: { action: 'accept', content: { name: 'x' } } },
    });
    expect(Object.keys(ack.json.result).sort()).toEqual(['_meta', 'resultType']);
    expect((await call(a, 'tasks/update', { taskId: task.taskId, inputResponses: [] })).json.error).toEqual({
      code: -32602,
      message: 'Invalid params: inputResponses must be an object keyed by input request',
    });
    expect((await call(a, 'tasks/update', { taskId: 'no-such-task', inputResponses: {} })).json.error).toEqual({
      code: -32602,
      message: 'Failed to retrieve task: Task not found',
    });
  });

  it('a listen stream on A agrees to the caller’s own task ids and receives notifications/tasks for a task run on B', async () => {
    const task = await create(a, 'report', 't26-listen');
    const theirs = await create(a, 'only_task', 'unused');
    const body = statelessRequest(
      nextId++,
      'subscriptions/listen',
      { notifications: { taskIds: [task.taskId, 'no-such-task'] } },
      WITH_TASKS,
    );
    const response = await fetch(`${a.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        ...routingHeaders(body),
        'Content-Type': 'application/json',
        Accept: MCP_ACCEPT,
        Authorization: 'Bearer token-alice',
      },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    const reader = new SseReader(response);
    readers.push(reader);
    const ack = JSON.parse((await reader.next())!.data);
    expect(ack.method).toBe('notifications/subscriptions/acknowledged');
    expect(ack.params.notifications).toEqual({ taskIds: [task.taskId] });

    TaskGates.open('t26-listen');
    const seen: Record<string, unknown>[] = [];
    while (!seen.some((n) => (n.params as { status?: string }).status === 'completed')) {
      const event = await reader.next();
      if (!event) throw new Error('the listen stream ended');
      seen.push(JSON.parse(event.data));
    }
    expect(
      seen.every((n) => n.method === 'notifications/tasks' && (n.params as { taskId: string }).taskId === task.taskId),
    ).toBe(true);
    expect(seen.some((n) => (n.params as { taskId: string }).taskId === theirs.taskId)).toBe(false);
    const completed = seen[seen.length - 1].params as Record<string, unknown>;
    expect(completed).toMatchObject({
      taskId: task.taskId,
      status: 'completed',
      result: { content: [{ type: 'text', text: 'report t26-listen for alice (task yes)' }] },
    });
    expect((completed._meta as Record<string, unknown>)['io.modelcontextprotocol/subscriptionId']).toBe(body.id);
  });
});
