import type { Queue, QueueOptions } from 'bull';
import { createBullQueue } from '../../bull-queue.factory';
import type { McpRedisConnection } from '../../redis-connection';
import type { McpRedisOutageLog } from '../../redis-outage-log';

/** When a pruner runs: `start` calls `tick` once per period until `close`. */
export interface RetentionSchedule {
  /** Starts calling `tick` once per period. */
  start(tick: () => Promise<void>): Promise<void>;
  /** Stops; a tick under way is not interrupted. */
  close(): Promise<void>;
}

/** A timer of this process (unref'd: it never keeps the process alive). Replicas meet on the advisory lock. */
export class IntervalRetentionSchedule implements RetentionSchedule {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly intervalMs: number) {}

  /** @inheritdoc */
  async start(tick: () => Promise<void>): Promise<void> {
    this.timer = setInterval(() => void tick(), this.intervalMs);
    this.timer.unref();
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** Where the Bull queue of a pruner lives. */
export interface RetentionQueueSettings {
  /** The queue name (one per mount, one for the client). */
  name: string;
  /** The module's Redis (URL, ioredis or Sentinel options, Cluster); else the Redis of `options`. */
  redis?: McpRedisConnection;
  /** Bull options (redis, prefix). */
  options: QueueOptions;
}

/** The fixed id of the repeatable prune job: every replica adds the same one, so Redis holds one schedule. */
export const RETENTION_JOB_ID = 'mcp-retention';

/**
 * A Bull repeatable job with a fixed id: every replica registers the same schedule and consumes
 * the queue, and each period's job runs on exactly one of them. A schedule of another period
 * (the option changed) is removed when a replica starts with the new one.
 */
export class BullRetentionSchedule implements RetentionSchedule {
  private readonly queue: Queue;

  constructor(
    settings: RetentionQueueSettings,
    private readonly intervalMs: number,
    outages: McpRedisOutageLog,
  ) {
    this.queue = createBullQueue(
      {
        feature: 'retention (Bull)',
        role: 'Retention queue',
        name: settings.name,
        redis: settings.redis,
        options: settings.options,
      },
      outages,
    );
  }

  /** @inheritdoc */
  async start(tick: () => Promise<void>): Promise<void> {
    await this.queue.isReady();
    void this.queue.process('prune', 1, async () => tick());
    for (const job of await this.queue.getRepeatableJobs()) {
      if (job.name === 'prune' && Number(job.every) !== this.intervalMs)
        await this.queue.removeRepeatableByKey(job.key);
    }
    await this.queue.add(
      'prune',
      {},
      { repeat: { every: this.intervalMs }, jobId: RETENTION_JOB_ID, removeOnComplete: true, removeOnFail: true },
    );
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    await this.queue.close();
  }
}
