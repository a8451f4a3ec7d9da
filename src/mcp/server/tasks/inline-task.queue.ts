import type { McpTaskQueue, McpTaskQueueStats, McpTaskWork } from './mcp-task.queue';

/** A task waiting in memory, and since when (Date.now()). */
interface WaitingTask {
  taskId: string;
  since: number;
}

/**
 * Tasks run in the process that created them, `concurrency` at once, the rest waiting in memory
 * (a task still waiting when the process ends is picked up again by the boot sweep).
 */
export class McpInlineTaskQueue implements McpTaskQueue {
  readonly redelivers = false;
  /** @inheritdoc */
  readonly mode = 'inline' as const;
  private work?: McpTaskWork;
  private concurrency = 0;
  private readonly waiting: WaitingTask[] = [];
  private readonly running = new Set<Promise<void>>();

  /** @inheritdoc */
  async start(work: McpTaskWork, concurrency: number): Promise<void> {
    this.work = work;
    this.concurrency = concurrency;
    this.drain();
  }

  /** @inheritdoc */
  async enqueue(taskId: string): Promise<void> {
    this.waiting.push({ taskId, since: Date.now() });
    this.drain();
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    this.waiting.length = 0;
    this.work = undefined;
    await Promise.allSettled([...this.running]);
  }

  /**
   * @inheritdoc
   * The in-process worker counts as one while it runs tasks (started with a concurrency above 0
   * and not closed); the first waiting task is the oldest.
   */
  async stats(): Promise<McpTaskQueueStats> {
    const oldest = this.waiting[0];
    return {
      mode: this.mode,
      workers: this.work && this.concurrency > 0 ? 1 : 0,
      active: this.running.size,
      waiting: this.waiting.length,
      oldestWaitingMs: oldest ? Math.max(0, Date.now() - oldest.since) : null,
    };
  }

  private drain(): void {
    while (this.work && this.running.size < this.concurrency && this.waiting.length) {
      const run = this.work((this.waiting.shift() as WaitingTask).taskId).finally(() => {
        this.running.delete(run);
        this.drain();
      });
      this.running.add(run);
    }
  }
}
