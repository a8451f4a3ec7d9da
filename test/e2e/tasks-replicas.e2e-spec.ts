import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import { startTaskReplica } from '../fixtures/tasks/task-replica';
import { TASK_REPLICAS, TASK_RUNS, TaskGates } from '../fixtures/tasks/task-tools';
import { type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys } from '../support/redis';

/**
 * Two replicas on one database and one Redis: A creates tasks and runs none (`concurrency: 0`),
 * B consumes the Bull queue. Status, cancellation and results cross between them.
 */
describe('tasks across replicas (PostgreSQL + Redis, Bull queue)', () => {
  let db: TestDatabase;
  let a: RunningApp | undefined;
  let b: RunningApp;
  const clients: Client[] = [];
  const suffix = randomBytes(6).toString('hex');
  const channelPrefix = `tasks-e2e-${suffix}`;
  const queueName = `tasks-e2e-${suffix}`;

  const boot = (replica: string, concurrency: number) =>
    startTaskReplica(db.url, replica, concurrency, { channelPrefix, queueName });

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await boot('A', 0);
    b = await boot('B', 2);
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await a?.close().catch(() => undefined);
    await b?.close().catch(() => undefined);
    await deleteRedisKeys(`${channelPrefix}*`, `bull:${queueName}*`);
    await db?.drop();
  });

  async function connect(app: RunningApp) {
    const transport = new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
    });
    const client = new Client(
      { name: 'tasks-replicas', version: '1.0.0' },
      { capabilities: { tasks: { list: {}, cancel: {} } } },
    );
    const statuses: { taskId: string; status: string; statusMessage?: string }[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      statuses.push(notification.params);
    });
    await client.connect(transport);
    clients.push(client);
    return { client, statuses };
  }

  const create = async (client: Client, name: string, gate: string) =>
    (
      await client.request(
        { method: 'tools/call', params: { name, arguments: { gate }, task: { ttl: 60_000 } } },
        CreateTaskResultSchema,
      )
    ).task;

  it('a cancel sent to A aborts the handler running on B', async () => {
    const { client } = await connect(a as RunningApp);
    const task = await create(client, 'hang', 'replicas-cancel');
    await pollUntil('the handler running on B', async () =>
      (await client.experimental.tasks.getTask(task.taskId)).statusMessage === 'hanging' ? true : undefined,
    );
    expect(await client.experimental.tasks.cancelTask(task.taskId)).toMatchObject({
      taskId: task.taskId,
      status: 'cancelled',
    });
    await pollUntil('the abort on B', () => TASK_RUNS.get('replicas-cancel')?.aborted ?? undefined);
    expect(TASK_RUNS.get('replicas-cancel')).toEqual({ runs: 1, aborted: 'The task was cancelled' });
    expect(TASK_REPLICAS.get('replicas-cancel')).toEqual(['B']);
    await client.close();
  });

  it('a task created on A runs on B, its status reaches the session held by A, and its result is read from B after A closed', async () => {
    const { client, statuses } = await connect(a as RunningApp);
    const task = await create(client, 'report', 'replicas-report');
    await pollUntil('step 1 on B', async () =>
      (await client.experimental.tasks.getTask(task.taskId)).statusMessage === 'step 1 of 2' ? true : undefined,
    );
    await pollUntil('the status notification on the stream held by A', () =>
      statuses.find((s) => s.taskId === task.taskId && s.statusMessage === 'step 1 of 2'),
    );
    expect(TASK_REPLICAS.get('replicas-report')).toEqual(['B']);

    TaskGates.open('replicas-report');
    await pollUntil('the task completed', async () =>
      (await client.experimental.tasks.getTask(task.taskId)).status === 'completed' ? true : undefined,
    );
    await client.close();
    await (a as RunningApp).close();
    a = undefined;

    const onB = await connect(b);
    expect(await onB.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).toEqual({
      content: [{ type: 'text', text: 'report replicas-report for alice (task yes)' }],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } },
    });
    expect(TASK_RUNS.get('replicas-report')).toEqual({ runs: 1, aborted: null });
  });
});
