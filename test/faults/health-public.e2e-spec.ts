import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { McpClientModule, McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { HEALTH_OPS_TOKEN, HealthOpsGuard } from '../fixtures/health/health-ops-guard';
import { HTTP_ADAPTERS } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { startFaultApp, type FaultApp } from './support/fault-app';
import { startPrivateRedis, type PrivateRedis } from './support/private-redis';
import { McpHealthModule } from '../../src/mcp/health';

jest.setTimeout(120_000);

const OPS = { Authorization: `Bearer ${HEALTH_OPS_TOKEN}` };

async function probe(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; json: Record<string, unknown> }> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as Record<string, unknown> };
}

/**
 * How many CLIENT LIST commands the private redis-server has run: the call queue's health check
 * reads Bull's workers with one CLIENT LIST per run, and nothing else on that server sends it.
 */
async function clientListCalls(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  return Number(/^cmdstat_client\|list:calls=(\d+)/m.exec(stats)?.[1] ?? 0);
}

/**
 * `McpHealthModule.forRoot({ detailsGuard, minIntervalMs })` on real PostgreSQL and a private
 * redis-server, on each adapter: strangers get `{ status }` alone from live and ready (200 or
 * 503), the guard's readers the whole report at `<path>/details`, and a flood of probes runs the
 * checks once per interval, counted by the redis-server itself (`INFO commandstats`).
 */
describe.each(HTTP_ADAPTERS)('health for strangers and for operators (%s)', (adapter) => {
  let db: TestDatabase;
  let redis: PrivateRedis;
  let observer: Redis;
  let server: FaultApp;
  let stalled: FaultApp;
  const prefix = `health-public-${adapter}-${randomBytes(4).toString('hex')}`;

  const boot = (queue: { name: string; worker: boolean }, health: Parameters<typeof McpHealthModule.forRoot>[0]) =>
    startFaultApp(
      db.url,
      {
        imports: [
          McpModule.forRoot({ auth: fixtureAuth, providers: [FixtureTools] }),
          McpClientModule.forRoot({
            servers: { self: { transport: 'toolset', principal: 'svc' } },
            redis: redis.url,
            queue: { ...queue, attempts: 1, commandTimeoutMs: 1000 },
          }),
          McpHealthModule.forRoot(health),
        ],
        providers: [FixtureTools],
      },
      adapter,
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    redis = await startPrivateRedis();
    observer = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    // minWorkers 0: the queue check is up from the first probe (Bull registers its worker asynchronously), and still reads the workers.
    server = await boot(
      { name: `${prefix}-calls`, worker: true },
      { detailsGuard: HealthOpsGuard, minIntervalMs: 60_000, queue: { minWorkers: 0 } },
    );
    stalled = await boot({ name: `${prefix}-idle`, worker: false }, { detailsGuard: HealthOpsGuard });
  });

  afterAll(async () => {
    await server?.close().catch(() => undefined);
    await stalled?.close().catch(() => undefined);
    observer?.disconnect();
    await redis?.destroy();
    await db?.drop();
  });

  it('runs the checks once for a flood of concurrent probes, and not again within minIntervalMs', async () => {
    const before = await clientListCalls(observer);
    const flood = await Promise.all([
      ...Array.from({ length: 20 }, () => probe(`${server.baseUrl}/health/ready`)),
      ...Array.from({ length: 5 }, () => probe(`${server.baseUrl}/health/details`, OPS)),
    ]);
    expect(flood.map((reply) => reply.status)).toEqual(Array(25).fill(200));
    expect((await clientListCalls(observer)) - before).toBe(1);
    for (let n = 0; n < 10; n++) expect((await probe(`${server.baseUrl}/health/ready`)).status).toBe(200);
    expect((await clientListCalls(observer)) - before).toBe(1);
  });

  it('answers a stranger { status } alone on live and ready: no check names, no pid, no uptime', async () => {
    for (const route of ['ready', 'live']) {
      const reply = await probe(`${server.baseUrl}/health/${route}`);
      expect({ route, status: reply.status, body: reply.json }).toEqual({ route, status: 200, body: { status: 'ok' } });
      expect(reply.text).not.toMatch(/pid|uptime|database|queue|stdio|latency|postgres/);
    }
  });

  it("answers the whole report and the process at /health/details to the guard's readers only", async () => {
    expect((await probe(`${server.baseUrl}/health/details`)).status).toBe(401);
    expect((await probe(`${server.baseUrl}/health/details`, { Authorization: 'Bearer someone-else' })).status).toBe(
      403,
    );
    const details = await probe(`${server.baseUrl}/health/details`, OPS);
    expect(details.status).toBe(200);
    const report = details.json.details as Record<string, Record<string, unknown>>;
    expect(report.database).toMatchObject({ status: 'up', type: 'postgres', latencyMs: expect.any(Number) });
    expect(report.queue).toMatchObject({ status: 'up', mode: 'bull' });
    expect(report.stdio).toMatchObject({ status: 'up', servers: {} });
    expect(report.shutdown).toMatchObject({ status: 'up', draining: false });
    expect(report.process).toMatchObject({ status: 'up', pid: process.pid, uptimeSeconds: expect.any(Number) });
    expect(details.text).not.toMatch(/redis:\/\/|postgres:\/\//);
  });

  it('answers a stranger 503 { status: "error" } when a check is down, and the reader why', async () => {
    const down = await probe(`${stalled.baseUrl}/health/ready`);
    expect({ status: down.status, body: down.json }).toEqual({ status: 503, body: { status: 'error' } });
    const details = await probe(`${stalled.baseUrl}/health/details`, OPS);
    expect(details.status).toBe(503);
    expect((details.json.error as Record<string, unknown>).queue).toMatchObject({
      status: 'down',
      workers: 0,
      message: expect.stringContaining('0 worker(s)'),
    });
    expect((await probe(`${stalled.baseUrl}/health/live`)).json).toEqual({ status: 'ok' });
  });
});
