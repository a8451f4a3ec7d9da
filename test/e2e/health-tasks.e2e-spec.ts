import { randomBytes } from 'node:crypto';
import { McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { TaskGates, TaskTools } from '../fixtures/tasks/task-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { startPrivateRedis, type PrivateRedis } from '../faults/support/private-redis';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';
import { McpHealthModule } from '../../src/mcp/health';

jest.setTimeout(120_000);

const WITH_TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

/** What terminus answers: the overall status and each check under `details` (failing ones under `error` too). */
interface HealthReport {
  status: 'ok' | 'error';
  details: Record<string, { status: 'up' | 'down'; [detail: string]: unknown }>;
  error?: Record<string, { status: 'down'; message?: string; [detail: string]: unknown }>;
}

/** The per-mount details of the `tasks` check. */
type TaskMounts = Record<
  string,
  { mode: string; workers: number; active: number; waiting: number; oldestWaitingMs: number | null }
>;

async function probe(app: RunningApp): Promise<{ status: number; report: HealthReport; text: string }> {
  const response = await fetch(`${app.baseUrl}/health/ready`);
  const text = await response.text();
  return { status: response.status, report: JSON.parse(text) as HealthReport, text };
}

/**
 * `McpHealthIndicator.tasks` in readiness, on a mount whose task tools run on a Bull queue (real
 * Redis and PostgreSQL), shared by two replicas: W runs tasks one at a time, E only creates them
 * (`tasks.concurrency: 0`). Readiness is up while W's worker consumes, down naming the mount when
 * a task waits longer than `tasks.maxWaitingAgeMs`, and on E down for want of workers once W is
 * gone. A mount without task tools is not in the report.
 */
describe('health checks: the task queue in /health/ready (Bull, two replicas)', () => {
  let db: TestDatabase;
  let worker: RunningApp;
  let enqueuer: RunningApp;
  const suffix = randomBytes(6).toString('hex');
  const channelPrefix = `health-tasks-e2e-${suffix}`;
  const queueName = `health-tasks-e2e-${suffix}`;
  const gate = (name: string) => `${suffix}-${name}`;

  const boot = (concurrency: number, health: Parameters<typeof McpHealthModule.forRoot>[0]) =>
    startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [TaskTools],
          redis: TEST_REDIS_URL,
          advanced: { pubsub: { channelPrefix } },
          stateless: { requestStateSecret: 'a-shared-secret-of-the-health-tasks-suite' },
          tasks: { concurrency, queueName, pollIntervalMs: 50 },
        }),
        McpModule.forRoot({ mount: 'plain', path: '/plain/mcp', auth: fixtureAuth, providers: [FixtureTools] }),
        McpHealthModule.forRoot(health),
      ],
      providers: [TaskTools, FixtureTools],
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    worker = await boot(1, { tasks: { maxWaitingAgeMs: 300 } });
    enqueuer = await boot(0, {});
  });

  afterAll(async () => {
    for (const name of ['busy', 'queued']) TaskGates.open(gate(name));
    await worker?.close().catch(() => undefined);
    await enqueuer?.close().catch(() => undefined);
    await deleteRedisKeys(`${channelPrefix}*`, `bull:${queueName}*`);
    await db?.drop();
  });

  let nextId = 1;
  const call = async (app: RunningApp, method: string, params: Record<string, unknown>) => {
    const body = statelessRequest(nextId++, method, params, WITH_TASKS);
    const headers: Record<string, string> = typeof params.taskId === 'string' ? { 'Mcp-Name': params.taskId } : {};
    const reply = await statelessPost(`${app.baseUrl}/mcp`, body, { token: 'token-alice', headers });
    return reply.json.result as Record<string, unknown>;
  };
  const startTask = async (app: RunningApp, name: string) => {
    const created = await call(app, 'tools/call', { name: 'report', arguments: { gate: gate(name) } });
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    return created.taskId as string;
  };
  const taskStatus = async (app: RunningApp, taskId: string) => call(app, 'tasks/get', { taskId });

  it('is ready while the worker consumes, with the task queue of the mount that has task tools', async () => {
    // Bull registers its worker connection asynchronously after bootstrap.
    const { report, text } = await pollUntil('readiness 200 with a task worker', async () => {
      const reply = await probe(worker);
      return reply.status === 200 && (reply.report.details.tasks?.mounts as TaskMounts | undefined)?.default?.workers
        ? reply
        : undefined;
    });
    const mounts = report.details.tasks.mounts as TaskMounts;
    expect(Object.keys(mounts)).toEqual(['default']);
    expect(mounts.default).toMatchObject({ mode: 'bull', active: 0, waiting: 0, oldestWaitingMs: null });
    expect(report.details.tasks).toMatchObject({ status: 'up', minWorkers: 1, maxWaitingAgeMs: 300 });
    expect(text).not.toMatch(/redis:\/\//);

    const busy = await startTask(worker, 'busy');
    await pollUntil('the first task runs on the worker', async () =>
      (await taskStatus(worker, busy)).statusMessage === 'step 1 of 2' ? true : undefined,
    );
    const running = await probe(worker);
    expect(running.status).toBe(200);
    expect((running.report.details.tasks.mounts as TaskMounts).default).toMatchObject({
      active: 1,
      waiting: 0,
      oldestWaitingMs: null,
    });
  });

  it('is down, naming the mount, when a task waits longer than tasks.maxWaitingAgeMs; ready again once the worker takes it', async () => {
    // The worker runs one task at a time and is still busy with the first: this one waits in Redis.
    const queued = await startTask(enqueuer, 'queued');
    const down = await pollUntil('readiness 503 for a task waiting too long', async () => {
      const reply = await probe(worker);
      return reply.status === 503 && reply.report.error?.tasks ? reply : undefined;
    });
    expect(down.report.error?.tasks).toMatchObject({ status: 'down', minWorkers: 1, maxWaitingAgeMs: 300 });
    expect(down.report.error?.tasks.message).toMatch(
      /^mount "default": the oldest waiting task has waited \d+ ms, more than 300 ms$/,
    );
    const mounts = down.report.error?.tasks.mounts as TaskMounts;
    expect(mounts.default).toMatchObject({ mode: 'bull', active: 1, waiting: 1 });
    // One replica runs tasks, one at a time: Bull knows one worker connection.
    expect(mounts.default.workers).toBe(1);
    expect(mounts.default.oldestWaitingMs).toBeGreaterThan(300);
    expect(down.report.details.database.status).toBe('up');
    expect((await taskStatus(worker, queued)).status).toBe('working');

    TaskGates.open(gate('busy'));
    TaskGates.open(gate('queued'));
    await pollUntil('the waiting task completed', async () =>
      (await taskStatus(enqueuer, queued)).status === 'completed' ? true : undefined,
    );
    const back = await pollUntil('readiness 200 once nothing waits', async () => {
      const reply = await probe(worker);
      return reply.status === 200 ? reply : undefined;
    });
    expect((back.report.details.tasks.mounts as TaskMounts).default).toMatchObject({
      waiting: 0,
      oldestWaitingMs: null,
    });
  });

  it('a replica that runs no task counts the workers of the others, and is down once none consumes the queue', async () => {
    const shared = await probe(enqueuer);
    expect(shared.status).toBe(200);
    expect((shared.report.details.tasks.mounts as TaskMounts).default.workers).toBe(1);

    await worker.close();
    const down = await pollUntil('readiness 503 without task workers', async () => {
      const reply = await probe(enqueuer);
      return reply.status === 503 && reply.report.error?.tasks ? reply : undefined;
    });
    expect(down.report.error?.tasks).toMatchObject({
      status: 'down',
      minWorkers: 1,
      mounts: { default: { mode: 'bull', workers: 0 } },
      message: 'mount "default": 0 worker(s) consume the task queue, fewer than 1',
    });
  });
});

/**
 * The task queue's Redis (`tasks.redis`, a private redis-server) killed and started again:
 * readiness goes down naming the mount whose queue cannot be read, without the connection URL,
 * and comes back by itself once Bull reconnects.
 */
describe('health checks: the task queue when its Redis goes away', () => {
  let db: TestDatabase;
  let redis: PrivateRedis;
  let server: RunningApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    redis = await startPrivateRedis();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [TaskTools],
          redis: redis.url,
          stateless: { requestStateSecret: 'a-shared-secret-of-the-health-tasks-suite' },
          tasks: { concurrency: 1, pollIntervalMs: 50 },
        }),
        McpHealthModule.forRoot({ tasks: { timeoutMs: 1000 } }),
      ],
      providers: [TaskTools],
    });
  });

  afterAll(async () => {
    await server?.close().catch(() => undefined);
    await redis?.destroy();
    await db?.drop();
  });

  it('is down while the queue cannot be read, and ready again once Redis is back', async () => {
    await pollUntil('readiness 200 with a task worker', async () =>
      (await probe(server)).status === 200 ? true : undefined,
    );
    await redis.kill();
    try {
      const down = await pollUntil('readiness 503 with the task queue unreadable', async () => {
        const reply = await probe(server);
        return reply.status === 503 && reply.report.error?.tasks ? reply : undefined;
      });
      expect(down.report.error?.tasks.message).toMatch(/^mount "default": the task queue cannot be read: /);
      expect(down.report.error?.tasks.mounts).toEqual({ default: { message: expect.any(String) } });
      expect(down.report.details.database.status).toBe('up');
      expect(down.text).not.toMatch(/redis:\/\//);
    } finally {
      await redis.start();
    }
    const back = await pollUntil(
      'readiness 200 after Redis came back',
      async () => {
        const reply = await probe(server);
        return reply.status === 200 ? reply : undefined;
      },
      60_000,
      250,
    );
    expect((back.report.details.tasks.mounts as TaskMounts).default).toMatchObject({ mode: 'bull', waiting: 0 });
    // The restarted Redis knows only the worker connection made since.
    expect((back.report.details.tasks.mounts as TaskMounts).default.workers).toBe(1);
  });
});
