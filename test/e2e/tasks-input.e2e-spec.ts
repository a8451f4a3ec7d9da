import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import { McpModule } from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { TASK_INPUT_OUTCOMES, TaskInputTools } from '../fixtures/tasks/task-input-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';

const EXTENSION = 'io.modelcontextprotocol/tasks';
const CAPABILITIES = { extensions: { [EXTENSION]: {} }, elicitation: { form: {} } };
const NAME_SCHEMA = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };

/**
 * `ctx.elicit` inside a task on 2026-07-28 (the tasks extension), two replicas on one PostgreSQL
 * and one Redis: A creates and serves tasks and runs none, B runs them. The task shows its
 * elicitation as `inputRequests` on `tasks/get` from any replica; `tasks/update` on A answers it
 * to the handler waiting on B.
 */
describe('input inside a task (2026-07-28, PostgreSQL + Redis, two replicas)', () => {
  let db: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;
  let short: RunningApp;
  const suffix = randomBytes(6).toString('hex');
  const channelPrefix = `tasks-input-e2e-${suffix}`;
  const queueName = `tasks-input-e2e-${suffix}`;

  const boot = (concurrency: number, tasks: Record<string, unknown> = {}, queue = queueName) =>
    startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [TaskInputTools],
          redis: TEST_REDIS_URL,
          advanced: { pubsub: { channelPrefix } },
          stateless: { requestStateSecret: 'a-shared-secret-of-the-input-suite' },
          tasks: { concurrency, queueName: queue, pollIntervalMs: 50, ...tasks },
        }),
      ],
      providers: [TaskInputTools],
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await boot(0);
    b = await boot(2);
  });

  afterAll(async () => {
    await a?.close().catch(() => undefined);
    await b?.close().catch(() => undefined);
    await short?.close().catch(() => undefined);
    await deleteRedisKeys(`${channelPrefix}*`, `bull:${queueName}*`);
    await db?.drop();
  });

  let nextId = 1;
  const call = (app: RunningApp, method: string, params: Record<string, unknown>, token = 'token-alice') => {
    const body = statelessRequest(nextId++, method, params, CAPABILITIES);
    const headers: Record<string, string> = typeof params.taskId === 'string' ? { 'Mcp-Name': params.taskId } : {};
    return statelessPost(`${app.baseUrl}/mcp`, body, { token, headers });
  };
  const create = async (app: RunningApp, gate: string) => {
    const reply = await call(app, 'tools/call', { name: 'greet', arguments: { gate } });
    expect(reply.status).toBe(200);
    expect(reply.json.result.resultType).toBe('task');
    return reply.json.result.taskId as string;
  };
  const getTask = async (app: RunningApp, taskId: string) =>
    (await call(app, 'tasks/get', { taskId })).json.result as Record<string, unknown>;
  const waitFor = (app: RunningApp, taskId: string, status: string) =>
    pollUntil(`task ${status}`, async () => {
      const task = await getTask(app, taskId);
      return task.status === status ? task : undefined;
    });

  it('tasks/get shows input_required with the elicitation; tasks/update on A answers it to the handler on B and the task completes with it', async () => {
    const taskId = await create(a, 'g1');
    const waiting = await waitFor(a, taskId, 'input_required');
    expect(waiting.inputRequests).toEqual({
      'name-g1': {
        method: 'elicitation/create',
        params: { mode: 'form', message: 'Your name for g1?', requestedSchema: NAME_SCHEMA },
      },
    });
    expect(waiting).toMatchObject({
      resultType: 'complete',
      taskId,
      status: 'input_required',
      statusMessage: 'asking g1',
    });
    expect((await getTask(b, taskId)).inputRequests).toEqual(waiting.inputRequests);

    // Keys not outstanding are ignored; an answer that is no ElicitResult is -32602.
    const bad = await call(a, 'tasks/update', { taskId, inputResponses: { 'name-g1': { content: {} } } });
    expect(bad.json.error).toEqual({
      code: -32602,
      message:
        'Invalid params: inputResponses["name-g1"] must be an ElicitResult with action "accept", "decline" or "cancel"',
    });
    const ack = await call(a, 'tasks/update', {
      taskId,
      inputResponses: { 'name-g1': { action: 'accept', content: { name: 'Ada' } }, other: { action: 'accept' } },
    });
    expect(ack.status).toBe(200);
    expect(Object.keys(ack.json.result).sort()).toEqual(['_meta', 'resultType']);

    const done = await waitFor(b, taskId, 'completed');
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'hello Ada (g1)' }] });
    expect(done.inputRequests).toBeUndefined();
    expect(TASK_INPUT_OUTCOMES.get('g1')).toBe('hello Ada (g1)');
  });

  it('another principal cannot answer: tasks/update with their token is -32602 task not found and the task still waits', async () => {
    const taskId = await create(a, 'g2');
    await waitFor(a, taskId, 'input_required');
    const theirs = await call(
      a,
      'tasks/update',
      { taskId, inputResponses: { 'name-g2': { action: 'accept', content: { name: 'Eve' } } } },
      'token-bob',
    );
    expect(theirs.json.error).toEqual({ code: -32602, message: 'Failed to retrieve task: Task not found' });
    expect((await getTask(b, taskId)).status).toBe('input_required');
    await call(b, 'tasks/update', { taskId, inputResponses: { 'name-g2': { action: 'decline' } } });
    expect((await waitFor(a, taskId, 'completed')).result).toEqual({
      content: [{ type: 'text', text: 'no name: decline (g2)' }],
    });
  });

  it('tasks/cancel while input_required cancels the task and the waiting handler sees the abort', async () => {
    const taskId = await create(a, 'g3');
    await waitFor(a, taskId, 'input_required');
    const ack = await call(a, 'tasks/cancel', { taskId });
    expect(ack.status).toBe(200);
    const cancelled = await getTask(b, taskId);
    expect(cancelled).toMatchObject({ status: 'cancelled', statusMessage: 'The task was cancelled by request' });
    expect(cancelled.inputRequests).toBeUndefined();
    expect(await pollUntil('the handler saw the abort', async () => TASK_INPUT_OUTCOMES.get('g3'))).toBe(
      'Error: The task was cancelled',
    );
    // An answer after the cancel is ignored.
    const late = await call(a, 'tasks/update', {
      taskId,
      inputResponses: { 'name-g3': { action: 'accept', content: { name: 'Late' } } },
    });
    expect(Object.keys(late.json.result).sort()).toEqual(['_meta', 'resultType']);
    expect((await getTask(a, taskId)).status).toBe('cancelled');
  });

  it('an unanswered input request ends at tasks.inputTimeoutMs: the handler sees McpClientRequestTimeoutError (a tool error: the task completes with isError)', async () => {
    const shortQueue = `${queueName}-short`;
    short = await boot(1, { inputTimeoutMs: 300 }, shortQueue);
    try {
      const taskId = await create(short, 'g4');
      const done = await waitFor(short, taskId, 'completed');
      expect(done.result).toEqual({
        isError: true,
        content: [{ type: 'text', text: 'The client did not answer elicitation/create within 300 ms' }],
      });
      expect(TASK_INPUT_OUTCOMES.get('g4')).toBe(
        'McpClientRequestTimeoutError: The client did not answer elicitation/create within 300 ms',
      );
    } finally {
      await deleteRedisKeys(`bull:${shortQueue}*`);
    }
  });

  it('2025-11-25 (SDK 1.x client on A, handler on B): the elicitation arrives on the stream of tasks/result with the related task and the answer completes the task', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${a.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
    });
    const client = new Client(
      { name: 'e2e-task-input', version: '1.0.0' },
      { capabilities: { elicitation: {}, tasks: { list: {}, cancel: {} } } },
    );
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: 'accept', content: { name: 'Grace' } };
    });
    await client.connect(transport);
    try {
      const created = await client.request(
        { method: 'tools/call', params: { name: 'greet', arguments: { gate: 'g5' }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;
      await pollUntil('input_required', async () =>
        (await client.experimental.tasks.getTask(taskId)).status === 'input_required' ? true : undefined,
      );
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.content).toEqual([{ type: 'text', text: 'hello Grace (g5)' }]);
      expect(result._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId } });
      expect(asked).toEqual([
        {
          mode: 'form',
          message: 'Your name for g5?',
          requestedSchema: NAME_SCHEMA,
          _meta: { 'io.modelcontextprotocol/related-task': { taskId } },
        },
      ]);
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('completed');
    } finally {
      await client.close();
    }
  });
});
