import { randomBytes } from 'node:crypto';
import { McpClientModule, McpClientService, McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startFaultApp, type FaultApp } from './support/fault-app';
import { pollUntil } from './support/free-port';
import { startPrivatePostgres, type PrivatePostgres } from './support/private-postgres';
import { startPrivateRedis, type PrivateRedis } from './support/private-redis';
import { McpHealthModule } from '../../src/mcp/health';

jest.setTimeout(120_000);

/** What terminus answers: the overall status and each check under `details` (failing ones under `error` too). */
interface HealthReport {
  status: 'ok' | 'error';
  details: Record<string, { status: 'up' | 'down'; [detail: string]: unknown }>;
  error?: Record<string, { status: 'down'; message?: string }>;
}

async function probe(url: string): Promise<{ status: number; report: HealthReport; text: string }> {
  const response = await fetch(url);
  const text = await response.text();
  return { status: response.status, report: JSON.parse(text) as HealthReport, text };
}

/**
 * `McpHealthModule.forRoot()` against real dependencies that go away: a private PostgreSQL
 * cluster stopped and started again, a private redis-server killed and restarted (the session
 * bus and the Bull call queue both on it). Readiness follows them (200, 503 naming the check
 * that is down, 200 again by itself); liveness stays 200 throughout. Reports carry latencies and
 * counts, never a connection URL.
 */
describe('health checks: /health/live and /health/ready', () => {
  let pg: PrivatePostgres;
  let redis: PrivateRedis;
  let server: FaultApp;
  let live: string;
  let ready: string;
  const prefix = `health-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    pg = await startPrivatePostgres();
    redis = await startPrivateRedis();
    server = await startFaultApp(pg.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [FixtureTools],
          advanced: { database: { timeoutMs: 1500 }, pubsub: { channelPrefix: prefix, timeoutMs: 1000 } },
          redis: redis.url,
          stateless: { requestStateSecret: randomBytes(24).toString('hex') },
        }),
        McpClientModule.forRoot({
          servers: { self: { transport: 'toolset', principal: 'svc' } },
          redis: redis.url,
          queue: { name: `${prefix}-calls`, attempts: 1, commandTimeoutMs: 1000 },
        }),
        McpHealthModule.forRoot(),
      ],
      providers: [FixtureTools],
    });
    live = `${server.baseUrl}/health/live`;
    ready = `${server.baseUrl}/health/ready`;
  });

  afterAll(async () => {
    await server?.close().catch(() => undefined);
    await redis?.destroy();
    await pg?.destroy();
  });

  it('is ready with every dependency up, and says what it checked', async () => {
    // Bull registers its worker connection asynchronously after bootstrap.
    const { report, text } = await pollUntil('readiness 200', async () => {
      const reply = await probe(ready);
      return reply.status === 200 ? reply : undefined;
    });
    expect(report.status).toBe('ok');
    expect(report.details.database).toMatchObject({ status: 'up', type: 'postgres', latencyMs: expect.any(Number) });
    expect(report.details.redis).toMatchObject({ status: 'up', listening: true, latencyMs: expect.any(Number) });
    expect(report.details.queue).toMatchObject({ status: 'up', mode: 'bull', waiting: 0, oldestWaitingMs: null });
    // One app with one worker on a Redis of its own.
    expect(report.details.queue.workers).toBe(1);
    expect(report.details.audit).toMatchObject({ status: 'up', backlog: 0 });
    expect(report.details.shutdown).toMatchObject({ status: 'up', draining: false });
    expect(report.details.stdio).toMatchObject({ status: 'up', servers: {} });
    expect(text).not.toMatch(/postgres:\/\/|redis:\/\//);
    expect((await probe(live)).status).toBe(200);
  });

  it('PostgreSQL stopped: readiness 503 with the database down, liveness 200; back to 200 once it is started again', async () => {
    await pg.stop();
    try {
      const down = await probe(ready);
      expect(down.status).toBe(503);
      expect(down.report.error?.database).toMatchObject({ status: 'down', message: expect.any(String) });
      expect(down.report.details.redis.status).toBe('up');
      expect(down.text).not.toMatch(/postgres:\/\//);
      const alive = await probe(live);
      expect(alive.status).toBe(200);
      expect(alive.report.details.process).toMatchObject({ status: 'up', pid: process.pid });
    } finally {
      await pg.start();
    }
    const back = await pollUntil('readiness 200 after PostgreSQL came back', async () => {
      const reply = await probe(ready);
      return reply.status === 200 ? reply : undefined;
    });
    expect(back.report.details.database.status).toBe('up');
  });

  it('Redis killed: readiness 503 with the session bus and the queue down, liveness 200; back to 200 once it runs again', async () => {
    await redis.kill();
    try {
      const down = await pollUntil('readiness 503 with Redis down', async () => {
        const reply = await probe(ready);
        return reply.status === 503 && reply.report.error?.redis && reply.report.error?.queue ? reply : undefined;
      });
      expect(down.report.error?.redis).toMatchObject({ status: 'down', message: expect.any(String) });
      expect(down.report.error?.queue).toMatchObject({ status: 'down', mode: 'bull', message: expect.any(String) });
      expect(down.report.details.database.status).toBe('up');
      expect(down.text).not.toMatch(/redis:\/\//);
      expect((await probe(live)).status).toBe(200);
    } finally {
      await redis.start();
    }
    const back = await pollUntil(
      'readiness 200 after Redis came back',
      async () => {
        const reply = await probe(ready);
        return reply.status === 200 ? reply : undefined;
      },
      60_000,
      250,
    );
    expect(back.report.details.redis).toMatchObject({ status: 'up', listening: true });
    expect(back.report.details.queue.status).toBe('up');
  });

  it('a queue nobody works on: down for want of workers, then for a call waiting too long', async () => {
    const name = `${prefix}-idle`;
    const enqueueOnly = (health: Parameters<typeof McpHealthModule.forRoot>[0]) =>
      startFaultApp(pg.url, {
        imports: [
          McpClientModule.forRoot({
            servers: { self: { transport: 'toolset', principal: 'svc' } },
            redis: redis.url,
            queue: { name, worker: false, attempts: 1, commandTimeoutMs: 1000 },
          }),
          McpHealthModule.forRoot(health),
        ],
      });
    const noWorkers = await enqueueOnly({});
    try {
      const reply = await probe(`${noWorkers.baseUrl}/health/ready`);
      expect(reply.status).toBe(503);
      expect(reply.report.error?.queue).toMatchObject({
        status: 'down',
        workers: 0,
        minWorkers: 1,
        message: expect.stringContaining('0 worker(s)'),
      });
    } finally {
      await noWorkers.close();
    }
    const stale = await enqueueOnly({ queue: { minWorkers: 0, maxWaitingAgeMs: 300 } });
    try {
      expect((await probe(`${stale.baseUrl}/health/ready`)).status).toBe(200);
      await stale.app.get(McpClientService).enqueueToolCall('self', 'echo', { text: 'nobody runs me' });
      const reply = await pollUntil('readiness 503 for a call waiting too long', async () => {
        const r = await probe(`${stale.baseUrl}/health/ready`);
        return r.status === 503 ? r : undefined;
      });
      expect(reply.report.error?.queue).toMatchObject({
        status: 'down',
        waiting: 1,
        message: expect.stringContaining('oldest waiting call'),
      });
    } finally {
      await stale.close();
    }
  });
});
