import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { freeLoopbackPort } from '../../../../test/support/child-process';
import { TEST_REDIS_URL, deleteRedisKeys } from '../../../../test/support/redis';
import { McpRedisPubSub } from '../pubsub/redis-pubsub';
import type { RateBudget } from './rate-counter';
import { McpRedisRateCounter } from './redis-rate-counter';

describe('McpRedisRateCounter (real Redis)', () => {
  const prefix = `rate-counter-${randomUUID().slice(0, 8)}`;
  let pubsub: McpRedisPubSub;
  let redis: Redis;
  const budget = (name: string, limit: number, windowMs = 60_000): RateBudget => ({
    key: `${prefix}:${name}`,
    limit,
    windowMs,
  });

  beforeAll(() => {
    pubsub = new McpRedisPubSub(TEST_REDIS_URL);
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    await pubsub.close();
    redis.disconnect();
    await deleteRedisKeys(`${prefix}:*`);
  });

  it('admits `limit` calls, then refuses with the time left in the window; the key expires with its window', async () => {
    const counter = new McpRedisRateCounter(pubsub);
    const verdicts = [];
    for (let i = 0; i < 4; i++) verdicts.push(await counter.take([budget('first', 3, 60_000)]));
    expect(verdicts.slice(0, 3)).toEqual([{ allowed: true }, { allowed: true }, { allowed: true }]);
    expect(verdicts[3]).toMatchObject({ allowed: false, index: 0 });
    const { retryAfterMs } = verdicts[3] as { retryAfterMs: number };
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(retryAfterMs).toBeLessThanOrEqual(60_000);
    expect(await redis.get(`${prefix}:first`)).toBe('3');
    const ttl = await redis.pttl(`${prefix}:first`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('two counters (two replicas) spend one budget between them', async () => {
    const other = new McpRedisPubSub(TEST_REDIS_URL);
    try {
      const a = new McpRedisRateCounter(pubsub);
      const b = new McpRedisRateCounter(other);
      const allowed = [];
      for (let i = 0; i < 8; i++) allowed.push((await (i % 2 ? b : a).take([budget('shared', 5)])).allowed);
      expect(allowed.filter(Boolean)).toHaveLength(5);
      expect(allowed).toEqual([true, true, true, true, true, false, false, false]);
    } finally {
      await other.close();
    }
  });

  it('counts a call in every budget or in none', async () => {
    const counter = new McpRedisRateCounter(pubsub);
    expect(await counter.take([budget('all-mount', 10), budget('all-tool', 1)])).toEqual({ allowed: true });
    expect(await counter.take([budget('all-mount', 10), budget('all-tool', 1)])).toMatchObject({
      allowed: false,
      index: 1,
    });
    expect(await redis.get(`${prefix}:all-mount`)).toBe('1');
    expect(await redis.get(`${prefix}:all-tool`)).toBe('1');
  });

  it('a new window opens once the key is gone, and a key that lost its expiry gets it back', async () => {
    const counter = new McpRedisRateCounter(pubsub);
    await counter.take([budget('again', 1)]);
    expect((await counter.take([budget('again', 1)])).allowed).toBe(false);
    await redis.del(`${prefix}:again`); // what the expiry does when the window closes
    expect((await counter.take([budget('again', 1)])).allowed).toBe(true);
    await redis.persist(`${prefix}:again`);
    expect(await counter.take([budget('again', 1, 30_000)])).toMatchObject({ allowed: false, retryAfterMs: 30_000 });
    expect(await redis.pttl(`${prefix}:again`)).toBeGreaterThan(0);
  });

  it('while Redis does not answer, counts in the process and logs the outage', async () => {
    const port = await freeLoopbackPort();
    const down = new McpRedisPubSub(`redis://127.0.0.1:${port}`, 200);
    const lines: string[] = [];
    const log = { report: (line: string) => void lines.push(line) };
    const errors = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const counter = new McpRedisRateCounter(down, log);
      const allowed = [];
      for (let i = 0; i < 3; i++) allowed.push((await counter.take([budget('outage', 2)])).allowed);
      expect(allowed).toEqual([true, true, false]);
      expect(lines.length).toBeGreaterThanOrEqual(1);
      expect(lines[0]).toMatch(
        /^Rate limits: .*rate limit.*; counting the budgets in this process until Redis answers$/,
      );
    } finally {
      errors.mockRestore();
      await down.close();
    }
  });
});
