import { randomBytes } from 'node:crypto';
import { McpModule } from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { BEFORE_TASK_RUNS, TaskInputBeforeTools } from '../fixtures/tasks/task-input-before-tools';
import { TASK_REPLICA } from '../fixtures/tasks/task-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';

const EXTENSION = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { extensions: { [EXTENSION]: {} }, elicitation: { form: {} } };
const WITHOUT_TASKS = { elicitation: { form: {} } };

/**
 * `inputBeforeTask` tools on 2026-07-28: the handler's first question is an `input_required`
 * round of the `tools/call` itself, `ctx.startTask()` then creates the task, and the worker (on
 * another replica) replays the round's answer to the same request. Two replicas on one PostgreSQL
 * and one Redis: A answers the calls and runs no task, B runs them.
 */
describe('input before the task (2026-07-28, PostgreSQL + Redis, two replicas)', () => {
  let db: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;
  const suffix = randomBytes(6).toString('hex');
  const channelPrefix = `tasks-before-e2e-${suffix}`;
  const queueName = `tasks-before-e2e-${suffix}`;

  const boot = (replica: string, concurrency: number) =>
    startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [TaskInputBeforeTools],
          redis: TEST_REDIS_URL,
          advanced: { pubsub: { channelPrefix } },
          stateless: { requestStateSecret: 'a-shared-secret-of-the-before-suite' },
          tasks: { concurrency, queueName, pollIntervalMs: 50 },
        }),
      ],
      providers: [TaskInputBeforeTools, { provide: TASK_REPLICA, useValue: replica }],
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await boot('A', 0);
    b = await boot('B', 2);
  });

  afterAll(async () => {
    await a?.close().catch(() => undefined);
    await b?.close().catch(() => undefined);
    await deleteRedisKeys(`${channelPrefix}*`, `bull:${queueName}*`);
    await db?.drop();
  });

  let nextId = 1;
  const call = async (
    app: RunningApp,
    method: string,
    params: Record<string, unknown>,
    capabilities: Record<string, unknown> = WITH_TASKS,
  ) => {
    const body = statelessRequest(nextId++, method, params, capabilities);
    const headers: Record<string, string> = typeof params.taskId === 'string' ? { 'Mcp-Name': params.taskId } : {};
    const reply = await statelessPost(`${app.baseUrl}/mcp`, body, { token: 'token-alice', headers });
    expect(reply.status).toBe(200);
    return reply.json.result as Record<string, unknown>;
  };
  const waitFor = (app: RunningApp, taskId: string, status: string) =>
    pollUntil(`task ${status}`, async () => {
      const task = await call(app, 'tasks/get', { taskId });
      return task.status === status ? task : undefined;
    });

  it('asks in a round of the call, answers CreateTaskResult to the retry, and the task on B gets the answer again and asks its own question', async () => {
    const first = await call(a, 'tools/call', { name: 'booking', arguments: { gate: 'b1' } });
    expect(first).toMatchObject({
      resultType: 'input_required',
      inputRequests: { user_name: { method: 'elicitation/create', params: { message: 'Who is booking?' } } },
    });
    expect(first.taskId).toBeUndefined();
    expect(typeof first.requestState).toBe('string');

    const created = await call(a, 'tools/call', {
      name: 'booking',
      arguments: { gate: 'b1' },
      inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } },
      requestState: first.requestState,
    });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    expect(typeof created.taskId).toBe('string');
    expect(created.requestState).toBeUndefined();
    expect(created.inputRequests).toBeUndefined();
    const taskId = created.taskId as string;

    const waiting = await waitFor(b, taskId, 'input_required');
    expect(Object.keys(waiting.inputRequests as object)).toEqual(['elicitation-2']);
    expect(waiting.inputRequests).toMatchObject({
      'elicitation-2': { method: 'elicitation/create', params: { message: 'Which colour?' } },
    });
    expect(
      await call(a, 'tasks/update', {
        taskId,
        inputResponses: { 'elicitation-2': { action: 'accept', content: { name: 'blue' } } },
      }),
    ).toMatchObject({ resultType: 'complete' });

    const done = await waitFor(a, taskId, 'completed');
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'Ada booked blue (task)' }] });
    // Before startTask: both rounds on A, then the replay on B; after it: once, in the task on B.
    expect(BEFORE_TASK_RUNS.get('b1')).toEqual({ before: ['A', 'A', 'B'], after: ['B:task'] });
  });

  it('an optional tool answers a client without the extension inline: startTask resolves and the handler goes on', async () => {
    const first = await call(a, 'tools/call', { name: 'maybe_task', arguments: { gate: 'b2' } }, WITHOUT_TASKS);
    expect(first).toMatchObject({
      resultType: 'input_required',
      inputRequests: { 'elicitation-1': { method: 'elicitation/create' } },
    });
    const answer = { 'elicitation-1': { action: 'accept', content: { name: 'Bo' } } };
    const done = await call(
      a,
      'tools/call',
      { name: 'maybe_task', arguments: { gate: 'b2' }, inputResponses: answer, requestState: first.requestState },
      WITHOUT_TASKS,
    );
    expect(done).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'hello Bo (inline)' }] });
    expect(done.taskId).toBeUndefined();
    expect(BEFORE_TASK_RUNS.get('b2')).toEqual({ before: ['A', 'A'], after: ['A:inline'] });
  });

  it('the same optional tool becomes a task for a client with the extension; the automatic key is replayed too', async () => {
    const first = await call(a, 'tools/call', { name: 'maybe_task', arguments: { gate: 'b3' } });
    const answer = { 'elicitation-1': { action: 'accept', content: { name: 'Cy' } } };
    const created = await call(a, 'tools/call', {
      name: 'maybe_task',
      arguments: { gate: 'b3' },
      inputResponses: answer,
      requestState: first.requestState,
    });
    expect(created.resultType).toBe('task');
    const done = await waitFor(b, created.taskId as string, 'completed');
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'hello Cy (task)' }] });
    expect(BEFORE_TASK_RUNS.get('b3')).toEqual({ before: ['A', 'A', 'B'], after: ['B:task'] });
  });
});
