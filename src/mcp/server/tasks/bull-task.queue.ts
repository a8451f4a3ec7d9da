import type { Queue } from 'bull';
import { createBullQueue, redisReady } from '../../bull-queue.factory';
import type { McpRedisConnection } from '../../redis-connection';
import type { McpRedisOutageLog } from '../../redis-outage-log';
import type { McpTaskQueue, McpTaskQueueStats, McpTaskWork } from './mcp-task.queue';

/** What a queued task job carries: only the id; the row holds the rest. */
interface McpTaskJobData {
  taskId: string;
}

/**
 * Tasks on a Bull queue that every replica's process consumes. A worker that stops renewing its
 * lock for `lockDurationMs` is taken for dead: Bull hands its job to another worker, which finds
 * the row claimed and ends the task as interrupted (or runs it again for an idempotent tool).
 */
export class McpBullTaskQueue implements McpTaskQueue {
  readonly redelivers = true;
  /** @inheritdoc */
  readonly mode = 'bull' as const;
  private readonly queue: Queue<McpTaskJobData>;

  constructor(name: string, redis: McpRedisConnection, lockDurationMs: number, outages: McpRedisOutageLog) {
    const settings = { lockDuration: lockDurationMs, stalledInterval: lockDurationMs, maxStalledCount: 3 };
    this.queue = createBullQueue<McpTaskJobData>(
      { feature: 'McpModule tasks (Bull)', role: 'Task queue', name, redis, options: { settings } },
      outages,
    );
  }

  /** @inheritdoc */
  async start(work: McpTaskWork, concurrency: number): Promise<void> {
    await this.queue.isReady();
    if (concurrency > 0) void this.queue.process(concurrency, async (job) => work(job.data.taskId));
  }

  /** @inheritdoc */
  async enqueue(taskId: string): Promise<void> {
    await this.queue.add({ taskId }, { jobId: taskId, attempts: 1, removeOnComplete: true, removeOnFail: true });
  }

  /**
   * @inheritdoc
   * Reads Redis: the workers registered on the queue by any replica (`getWorkers`), the active
   * and waiting counts, and the age of the oldest waiting job. Refused at once while the
   * connection is not ready (Bull would wait for it); the caller bounds the wait.
   */
  async stats(): Promise<McpTaskQueueStats> {
    if (!redisReady(this.queue)) throw new Error(`the connection to Redis is ${this.queue.client.status}`);
    const [workers, counts, oldest] = await Promise.all([
      this.queue.getWorkers(),
      this.queue.getJobCounts(),
      this.queue.getWaiting(0, 0),
    ]);
    // Ascending: the first waiting job is the oldest.
    const since = oldest.filter(Boolean).map((job) => job.timestamp);
    return {
      mode: this.mode,
      // Bull answers nothing when the server refuses CLIENT LIST: no worker can be counted.
      workers: workers?.length ?? 0,
      active: counts.active,
      waiting: counts.waiting,
      oldestWaitingMs: since.length ? Math.max(0, Date.now() - Math.min(...since)) : null,
    };
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    await this.queue.close();
  }
}
