import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { McpClientService, McpModule, type McpClientOptions } from '../../src/mcp';
import { McpCallAbortedError } from '../../src/mcp/errors';
import { killableWorkerQueue, startCallerAndWorker, stopAllWorkers } from '../fixtures/client/bull-worker-setup';
import { startWorker, type WorkerProcess } from '../fixtures/client/worker-process';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { TASK_RUNS, TaskGates, TaskTools } from '../fixtures/tasks/task-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';

jest.setTimeout(120_000);

type Row = {
  id: string;
  method: string;
  request: { params?: Record<string, unknown> };
  response: { result?: Record<string, unknown> } | null;
};

/**
 * A task-backed call on Bull whose worker process is SIGKILLed while it polls the task: the job
 * is re-run by another worker, which resumes polling the stored task id and never sends the
 * tools/call again; the tool ran once, and the caller gets its result.
 */
describe('McpClientService task-backed calls on Bull survive a worker killed mid-poll (real Redis, PostgreSQL)', () => {
  const queueName = `mcp-task-calls-${randomBytes(4).toString('hex')}`;
  const prefix = `mcp-e2e-${randomBytes(4).toString('hex')}`;
  let db: TestDatabase;
  let target: RunningApp;
  let caller: RunningApp;
  let client: McpClientService;
  let clientOptions: McpClientOptions;
  let redis: Redis;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    redis = new Redis(TEST_REDIS_URL);
    target = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [TaskTools],
          stateless: { requestStateSecret: 'a-shared-secret-of-the-bull-task-suite' },
          tasks: { pollIntervalMs: 200 },
        }),
      ],
      providers: [TaskTools],
    });
    clientOptions = {
      servers: {
        v25: { url: `${target.baseUrl}/mcp`, bearerToken: 'token-alice', version: '2025-11-25' },
        v26: { url: `${target.baseUrl}/mcp`, bearerToken: 'token-alice', version: '2026-07-28' },
      },
      redis: TEST_REDIS_URL,
      queue: killableWorkerQueue(queueName, prefix),
    };
    const started = await startCallerAndWorker(db.url, clientOptions);
    ({ caller, client } = started);
    workers.push(started.worker);
  });

  afterAll(async () => {
    await stopAllWorkers(workers);
    await caller?.close().catch(() => undefined);
    await target?.close().catch(() => undefined);
    await deleteRedisKeys(`${prefix}:*`);
    redis?.disconnect();
    await db?.drop();
  });

  async function outbound(server: string): Promise<Row[]> {
    return db.dataSource.query(
      `SELECT id, method, request, response FROM mcp_events WHERE direction = 'outbound' AND server = $1 ORDER BY created_at, id`,
      [server],
    );
  }

  function taskIdOf(row: Row): string {
    const result = row.response?.result ?? {};
    return String(((result.task as { taskId?: string } | undefined) ?? result).taskId);
  }

  it.each([
    ['v25', '2025-11-25'],
    ['v26', '2026-07-28'],
  ])(
    '%s: the new worker resumes polling the stored task; the tool ran once and the caller gets its result',
    async (name, revision) => {
      const gate = `killed-${name}`;
      const id = await client.callTool(name, 'report', { gate }, { task: { ttlMs: 60_000 }, wait: false });
      const isOurs = (row: Row) =>
        row.method === 'tools/call' && (row.request.params?.arguments as { gate?: string } | undefined)?.gate === gate;
      const call = await pollUntil(
        'the tools/call of the task',
        async () => (await outbound(name)).find(isOurs),
        60_000,
      );
      const taskId = taskIdOf(call);
      const gets = async () =>
        (await outbound(name)).filter((row) => row.method === 'tasks/get' && row.request.params?.taskId === taskId)
          .length;
      await pollUntil('a first tasks/get', async () => ((await gets()) > 0 ? true : undefined), 60_000);
      expect(JSON.parse((await redis.get(`${prefix}:${queueName}:mcp-task:${id}`)) ?? 'null')).toEqual({
        taskId,
        protocolVersion: revision,
      });

      await workers[0].kill();
      const before = await gets();
      // The dead worker's lock on the job would lapse by itself at the end of its lockDuration
      // (10 s, long so that a live worker starved of CPU keeps its lock), which would be most of
      // this test's time. The dead process can no longer renew it: delete it, as its expiry
      // would. The job is still handed over by Bull's own stalled-job check, in the new worker.
      await redis.del(`${prefix}:${queueName}:${id}:lock`);
      workers.push(await startWorker({ databaseUrl: db.url, client: clientOptions }));
      // The re-run polls the same task (its rows come from the new worker) before the tool may end.
      await pollUntil(
        'a tasks/get of the new worker',
        async () => ((await gets()) > before ? true : undefined),
        60_000,
      );
      expect(await client.getCallResult(id)).toEqual({ id, state: 'pending' });
      TaskGates.open(gate);

      const text = `report ${gate} for alice (task yes)`;
      const expected =
        revision === '2025-11-25'
          ? { content: [{ type: 'text', text }], _meta: { 'io.modelcontextprotocol/related-task': { taskId } } }
          : { content: [{ type: 'text', text }] };
      expect(await client.waitForCall(id)).toEqual(expected);
      expect(TASK_RUNS.get(gate)).toEqual({ runs: 1, aborted: null });
      expect((await outbound(name)).filter(isOurs)).toHaveLength(1);
      const inbound = await db.dataSource.query(
        `SELECT count(*)::int AS n FROM mcp_events WHERE direction = 'inbound' AND method = 'tools/call' AND request->'params'->'arguments'->>'gate' = $1`,
        [gate],
      );
      expect(inbound).toEqual([{ n: 1 }]);
      expect(await db.dataSource.query(`SELECT status FROM mcp_tasks WHERE id = $1`, [taskId])).toEqual([
        { status: 'completed' },
      ]);
      workers.shift();
    },
  );

  it.each([
    ['v25', '2025-11-25'],
    ['v26', '2026-07-28'],
  ])(
    "%s: the caller's abort reaches the worker process polling the task, which sends tasks/cancel; the server's handler sees its signal",
    async (name) => {
      const gate = `aborted-${name}`;
      const controller = new AbortController();
      const call = client
        .callTool(name, 'hang', { gate }, { task: { ttlMs: 60_000 }, signal: controller.signal })
        .catch((error: unknown) => error);
      const isOurs = (row: Row) =>
        row.method === 'tools/call' && (row.request.params?.arguments as { gate?: string } | undefined)?.gate === gate;
      const taskId = taskIdOf(
        await pollUntil('the tools/call of the task', async () => (await outbound(name)).find(isOurs), 60_000),
      );
      const rowsOf = async (method: string) =>
        (await outbound(name)).filter((row) => row.method === method && row.request.params?.taskId === taskId);
      await pollUntil(
        'the worker polling the task',
        async () => ((await rowsOf('tasks/get')).length > 0 ? true : undefined),
        60_000,
      );
      await pollUntil('the handler running', () => (TASK_RUNS.get(gate)?.runs === 1 ? true : undefined));

      controller.abort('the user gave up');
      const error = await call;
      expect(error).toBeInstanceOf(McpCallAbortedError);
      expect(error).toMatchObject({ delivered: true });
      await pollUntil('the handler to see its abort', () => TASK_RUNS.get(gate)?.aborted ?? undefined);
      expect(TASK_RUNS.get(gate)).toEqual({ runs: 1, aborted: 'The task was cancelled' });
      // Sent once, by the worker process (the caller's app runs no worker).
      expect(await rowsOf('tasks/cancel')).toHaveLength(1);
      expect(await db.dataSource.query(`SELECT status FROM mcp_tasks WHERE id = $1`, [taskId])).toEqual([
        { status: 'cancelled' },
      ]);
    },
  );
});
