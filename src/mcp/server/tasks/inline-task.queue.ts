import type { McpTaskQueue, McpTaskWork } from './mcp-task.queue';

/**
 * Tasks run in the process that created them, `concurrency` at once, the rest waiting in memory
 * (a task still waiting when the process ends is picked up again by the boot sweep).
 */
export class McpInlineTaskQueue implements McpTaskQueue {
  readonly redelivers = false;
  private work?: McpTaskWork;
  private concurrency = 0;
  private readonly waiting: string[] = [];
  private readonly running = new Set<Promise<void>>();

  /** @inheritdoc */
  async start(work: McpTaskWork, concurrency: number): Promise<void> {
    this.work = work;
    this.concurrency = concurrency;
    this.drain();
  }

  /** @inheritdoc */
  async enqueue(taskId: string): Promise<void> {
    this.waiting.push(taskId);
    this.drain();
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    this.waiting.length = 0;
    this.work = undefined;
    await Promise.allSettled([...this.running]);
  }

  private drain(): void {
    while (this.work && this.running.size < this.concurrency && this.waiting.length) {
      const run = this.work(this.waiting.shift() as string).finally(() => {
        this.running.delete(run);
        this.drain();
      });
      this.running.add(run);
    }
  }
}
