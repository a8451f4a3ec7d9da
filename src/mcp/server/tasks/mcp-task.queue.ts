/** Runs one task by id (claims it, runs the tool, stores the outcome). */
export type McpTaskWork = (taskId: string) => Promise<void>;

/**
 * Where tasks wait for a worker: a Bull queue that every replica consumes, or the process that
 * created them. The queue carries only the task id; the row holds the rest.
 */
export interface McpTaskQueue {
  /** True when the queue hands a job whose worker died to another worker (Bull's stalled jobs). */
  readonly redelivers: boolean;
  /** `bull` (Redis, every replica) or `inline` (this process). */
  readonly mode: 'bull' | 'inline';
  /** Starts consuming with `concurrency` tasks at once (0: this process runs none). */
  start(work: McpTaskWork, concurrency: number): Promise<void>;
  /** Queues a task. */
  enqueue(taskId: string): Promise<void>;
  /** Stops consuming and lets go of the connection. */
  close(): Promise<void>;
  /** What the queue holds and who works on it, for health checks. */
  stats(): Promise<McpTaskQueueStats>;
}

/** A snapshot of a mount's task queue, for health checks (shaped like the client's call queue stats). */
export interface McpTaskQueueStats {
  /** `bull` (Redis) or `inline` (this process). */
  mode: 'bull' | 'inline';
  /**
   * Workers consuming the queue: Bull's registered workers (every replica that runs tasks), or 1
   * for the in-process worker (0 before it starts, once closed, or with `tasks.concurrency: 0`).
   */
  workers: number;
  /** Tasks running now (on this process for inline; the queue's active jobs for Bull). */
  active: number;
  /** Tasks waiting for a worker. */
  waiting: number;
  /** Age of the oldest waiting task, in milliseconds, or null when none waits. */
  oldestWaitingMs: number | null;
}
