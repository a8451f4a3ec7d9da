import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { McpModule, type McpModuleOptions } from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { LEDGER_TABLE, LedgerTools } from '../fixtures/tasks/ledger-tools';
import type { TaskWorkerConfig } from '../fixtures/tasks/task-worker-app';
import { spawnReady, TS_REGISTER, type ReadyChild } from '../support/child-process';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';

const ROOT = join(__dirname, '..', '..');

/**
 * A replica in a child process claims a task and is SIGKILLed while its handler runs. Bull finds
 * the job stalled once the dead worker's lock lapses and hands it to the replica still alive,
 * which finds the row claimed (without Redis, the restarted process finds it at boot): the task
 * of a tool that is not idempotent ends failed ("interrupted") without a second run; the task of
 * an idempotent tool runs again and completes.
 */
describe('a task worker SIGKILLed mid-task (PostgreSQL; Bull on Redis, or in process)', () => {
  let db: TestDatabase;
  let survivor: RunningApp | undefined;
  let child: ReadyChild | undefined;
  const suffix = randomBytes(6).toString('hex');
  const channelPrefix = `tasks-kill-${suffix}`;
  const tasks: McpModuleOptions.Tasks = { queueName: `tasks-kill-${suffix}`, lockDurationMs: 1000, pollIntervalMs: 50 };

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.dataSource.query(`CREATE TABLE ${LEDGER_TABLE} (entry text NOT NULL, pid integer NOT NULL)`);
  });

  afterEach(async () => {
    if (child?.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await child?.stop(1000);
    child = undefined;
    await survivor?.close();
    survivor = undefined;
  });

  afterAll(async () => {
    await deleteRedisKeys(`${channelPrefix}*`, `bull:${tasks.queueName}*`);
    await db?.drop();
  });

  async function spawnDoomedReplica(queued = true): Promise<ReadyChild> {
    const config: TaskWorkerConfig = {
      databaseUrl: db.url,
      ...(queued ? { redisUrl: TEST_REDIS_URL } : {}),
      channelPrefix,
      tasks,
    };
    return spawnReady(
      process.execPath,
      ['-r', TS_REGISTER, join(ROOT, 'test/fixtures/tasks/task-worker-app.ts')],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          MCP_TASK_WORKER_CONFIG: JSON.stringify(config),
          TS_NODE_PROJECT: join(ROOT, 'tsconfig.spec.json'),
          TASK_LEDGER_BLOCK: '1',
        },
      },
      /ready (\d+)/,
    );
  }

  async function connect(baseUrl: string): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
    });
    const client = new Client(
      { name: 'tasks-kill', version: '1.0.0' },
      { capabilities: { tasks: { list: {}, cancel: {} } } },
    );
    await client.connect(transport);
    return client;
  }

  const ledger = async (entry: string): Promise<number[]> =>
    (await db.dataSource.query(`SELECT pid FROM ${LEDGER_TABLE} WHERE entry = $1 ORDER BY pid`, [entry])).map(
      (row: { pid: number }) => row.pid,
    );

  /** Creates a task on the doomed replica, waits until its handler ran there, kills it, and boots the survivor in this process. */
  async function killMidTask(
    tool: string,
    entry: string,
    queued = true,
  ): Promise<{ client: Client; taskId: string; deadPid: number }> {
    child = await spawnDoomedReplica(queued);
    const doomed = await connect(`http://127.0.0.1:${child.ready[1]}`);
    const { task } = await doomed.request(
      { method: 'tools/call', params: { name: tool, arguments: { entry }, task: { ttl: 120_000 } } },
      CreateTaskResultSchema,
    );
    const [deadPid] = await pollUntil('the handler running in the child', async () =>
      (await ledger(entry)).length === 1 ? ledger(entry) : undefined,
    );
    expect(deadPid).toBe(child.child.pid);
    // The handler's status update follows its ledger row: kill the worker once it is recorded too,
    // so that the task's trail holds what the dead worker did before it died.
    await pollUntil('the handler status update of the child', async () => {
      const rows = await db.dataSource.query(
        `SELECT 1 FROM mcp_events WHERE kind = 'task' AND request->>'taskId' = $1 AND request->>'transition' = 'message'`,
        [task.taskId],
      );
      return rows.length ? true : undefined;
    });
    child.child.kill('SIGKILL');
    await child.stop(1000);
    await doomed.close().catch(() => undefined);
    const bus = queued
      ? {
          redis: TEST_REDIS_URL,
          advanced: { pubsub: { channelPrefix } },
          stateless: { requestStateSecret: 'a-shared-secret-of-the-task-suite' },
        }
      : {};
    survivor = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth, providers: [LedgerTools], ...bus, tasks })],
      providers: [LedgerTools],
    });
    return { client: await connect(survivor.baseUrl), taskId: task.taskId, deadPid };
  }

  it('ends the task of a tool that is not idempotent failed ("interrupted"), its handler run exactly once', async () => {
    const { client, taskId, deadPid } = await killMidTask('ledger_write', `write-${suffix}`);
    const error = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: -32603,
      message: 'MCP error -32603: The task was interrupted: the worker running it stopped before it finished',
    });
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({
      taskId,
      status: 'failed',
      statusMessage: 'Interrupted: the worker running the task stopped before it finished',
    });
    expect(await ledger(`write-${suffix}`)).toEqual([deadPid]);
    const [row] = await db.dataSource.query(`SELECT status, attempt FROM mcp_tasks WHERE id = $1`, [taskId]);
    expect(row).toEqual({ status: 'failed', attempt: 1 });
    await client.close();
  });

  it('runs the task of an idempotent tool again on the survivor, and it completes', async () => {
    const { client, taskId, deadPid } = await killMidTask('ledger_sync', `sync-${suffix}`);
    expect(await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).toEqual({
      content: [{ type: 'text', text: `written sync-${suffix}` }],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId } },
    });
    expect((await ledger(`sync-${suffix}`)).sort()).toEqual([deadPid, process.pid].sort());
    const [row] = await db.dataSource.query(`SELECT status, attempt FROM mcp_tasks WHERE id = $1`, [taskId]);
    expect(row).toEqual({ status: 'completed', attempt: 2 });
    const transitions = await db.dataSource.query(
      `SELECT request->>'transition' AS t FROM mcp_events WHERE kind = 'task' AND request->>'taskId' = $1`,
      [taskId],
    );
    expect(transitions.map((r: { t: string }) => r.t).sort()).toEqual(
      ['completed', 'created', 'message', 'message', 'rerun', 'started', 'started'].sort(),
    );
    await client.close();
  });

  it('without Redis, the restarted process finds the task its dead predecessor claimed and ends it interrupted', async () => {
    const { client, taskId, deadPid } = await killMidTask('ledger_write', `inline-${suffix}`, false);
    const error = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: -32603,
      message: 'MCP error -32603: The task was interrupted: the worker running it stopped before it finished',
    });
    expect(await ledger(`inline-${suffix}`)).toEqual([deadPid]);
    await client.close();
  });
});
