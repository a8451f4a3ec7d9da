import Bull from 'bull';
import { randomUUID } from 'node:crypto';
import { TEST_REDIS_URL, deleteRedisKeys } from '../../../../test/support/redis';
import { pollUntil } from '../../../../test/support/polling';
import { Logger } from '@nestjs/common';
import { McpRedisOutageLog } from '../../redis-outage-log';
import { BullRetentionSchedule, IntervalRetentionSchedule, RETENTION_JOB_ID } from './retention-schedule';

const outages = new McpRedisOutageLog(new Logger('retention-schedule.spec'));

describe('IntervalRetentionSchedule', () => {
  afterEach(() => jest.useRealTimers());

  it('ticks once per period until closed, and closing twice or before start is harmless', async () => {
    jest.useFakeTimers();
    const schedule = new IntervalRetentionSchedule(1000);
    await schedule.close();
    let ticks = 0;
    await schedule.start(async () => void ticks++);
    await jest.advanceTimersByTimeAsync(999);
    expect(ticks).toBe(0);
    await jest.advanceTimersByTimeAsync(2001);
    expect(ticks).toBe(3);
    await schedule.close();
    await schedule.close();
    await jest.advanceTimersByTimeAsync(5000);
    expect(ticks).toBe(3);
  });
});

describe('BullRetentionSchedule', () => {
  const prefix = `retention-schedule-spec-${randomUUID().slice(0, 8)}`;
  afterAll(async () => {
    await deleteRedisKeys(`${prefix}:*`);
  });

  it('replaces a repeatable prune job of another period with its own, under the fixed job id, and runs ticks', async () => {
    const name = 'mcp-retention-a';
    const other = new Bull(name, TEST_REDIS_URL, { prefix });
    try {
      await other.add('prune', {}, { repeat: { every: 60_000 }, jobId: RETENTION_JOB_ID });
      await other.add('unrelated', {}, { repeat: { every: 60_000 } });
    } finally {
      await other.close();
    }
    const schedule = new BullRetentionSchedule({ name, redis: TEST_REDIS_URL, options: { prefix } }, 200, outages);
    let ticks = 0;
    try {
      await schedule.start(async () => void ticks++);
      const inspect = new Bull(name, TEST_REDIS_URL, { prefix });
      try {
        const jobs = await inspect.getRepeatableJobs();
        expect(jobs.map((j) => [j.name, Number(j.every)]).sort()).toEqual([
          ['prune', 200],
          ['unrelated', 60_000],
        ]);
        expect(jobs.find((j) => j.name === 'prune')!.id).toBe(RETENTION_JOB_ID);
      } finally {
        await inspect.close();
      }
      await pollUntil('a prune tick', () => (ticks > 0 ? true : undefined));
    } finally {
      await schedule.close();
    }
    expect(ticks).toBeGreaterThan(0);
  });

  it('takes its Redis from the Bull options when no URL is given', async () => {
    const url = new URL(TEST_REDIS_URL);
    const name = 'mcp-retention-b';
    const schedule = new BullRetentionSchedule(
      { name, options: { prefix, redis: { host: url.hostname, port: Number(url.port || 6379) } } },
      60_000,
      outages,
    );
    try {
      await schedule.start(async () => undefined);
      const inspect = new Bull(name, TEST_REDIS_URL, { prefix });
      try {
        expect((await inspect.getRepeatableJobs()).map((j) => [j.name, Number(j.every)])).toEqual([['prune', 60_000]]);
      } finally {
        await inspect.close();
      }
    } finally {
      await schedule.close();
    }
  });
});
