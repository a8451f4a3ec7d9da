import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { McpModule, McpTool } from '../../src/mcp';
import { createInMemoryMcpStores } from '../../src/mcp/testing';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { RecordingLogger } from './support/fault-app';
import { pollUntil } from './support/free-port';
import { startPrivateRedis, type PrivateRedis } from './support/private-redis';

/** A window no test outlives. */
const WINDOW_MS = 600_000;

/** How often the tool's body ran, on both replicas. */
let runs = 0;

@Injectable()
class QuotaTools {
  @McpTool({ description: 'Three calls per window per caller', rateLimit: { limit: 3, windowMs: WINDOW_MS } })
  quota() {
    runs++;
    return 'ok';
  }
}

/**
 * The budgets while Redis is away: two replicas on a Redis of the test's own, which is killed and
 * started again. Before, the replicas share one budget; while it is down each replica counts in
 * its own memory (every limited call is still served up to the budget, none beyond it on that
 * replica) and the outage is logged; once it is back they share one budget again.
 */
describe('Rate limits during a Redis outage', () => {
  let redis: PrivateRedis;
  const apps: INestApplication[] = [];
  const loggers: RecordingLogger[] = [];
  let a: string;
  let b: string;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    const stores = createInMemoryMcpStores();
    const channelPrefix = `rate-outage-${randomBytes(4).toString('hex')}`;
    const boot = async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          McpModule.forRoot({
            auth: (token: string) => (/^token-[a-z0-9]+$/.test(token) ? token.slice('token-'.length) : null),
            providers: [QuotaTools],
            stores,
            redis: redis.url,
            advanced: { pubsub: { channelPrefix, timeoutMs: 2_000 } },
            stateless: { requestStateSecret: 'the-shared-secret-of-both-replicas' },
          }),
        ],
        providers: [QuotaTools],
      }).compile();
      const logger = new RecordingLogger();
      loggers.push(logger);
      const app = moduleRef.createNestApplication({ logger });
      await app.listen(0, '127.0.0.1');
      apps.push(app);
      const { port } = app.getHttpServer().address() as { port: number };
      return `http://127.0.0.1:${port}/mcp`;
    };
    a = await boot();
    b = await boot();
  });

  afterAll(async () => {
    for (const app of apps.reverse()) await app.close().catch(() => undefined);
    await redis?.destroy();
  });

  let id = 0;
  const call = async (url: string, who: string) =>
    (
      await statelessPost(url, statelessRequest(`q-${id++}`, 'tools/call', { name: 'quota', arguments: {} }), {
        token: `token-${who}`,
      })
    ).status;

  it('shares the budget, counts per replica while Redis is down (logged), and shares it again once Redis is back', async () => {
    // Redis up: one budget for both replicas.
    expect([await call(a, 'alice'), await call(b, 'alice'), await call(a, 'alice'), await call(b, 'alice')]).toEqual([
      200, 200, 200, 429,
    ]);
    expect(runs).toBe(3);

    await redis.kill();
    try {
      // Each replica now counts on its own: a fresh budget on each, still enforced.
      const onA = [];
      for (let i = 0; i < 4; i++) onA.push(await call(a, 'carol'));
      const onB = [];
      for (let i = 0; i < 4; i++) onB.push(await call(b, 'carol'));
      expect(onA).toEqual([200, 200, 200, 429]);
      expect(onB).toEqual([200, 200, 200, 429]);
      expect(runs).toBe(9);
      const outage = loggers
        .flatMap((logger) => logger.lines)
        .filter((line) => line.context === 'McpRateLimits' && line.level === 'warn');
      expect(outage.length).toBeGreaterThanOrEqual(1);
      expect(outage[0].message).toMatch(/^Rate limits: .*; counting the budgets in this process until Redis answers$/);
    } finally {
      await redis.start();
    }

    let probes = 0;
    // Back (a fresh, empty Redis): once both replicas count there again, one budget for both.
    // A caller of its own, so that a command ioredis re-sends on reconnect counts for nobody here.
    await pollUntil(
      'both replicas to count in Redis again',
      async () => {
        const probe = `probe${probes++}`;
        const statuses = [];
        for (let i = 0; i < 4; i++) statuses.push(await call(i % 2 ? b : a, probe));
        return statuses.join() === '200,200,200,429' ? true : undefined;
      },
      60_000,
      250,
    );
    expect([await call(a, 'dave'), await call(b, 'dave'), await call(a, 'dave'), await call(b, 'dave')]).toEqual([
      200, 200, 200, 429,
    ]);
  }, 120_000);
});
