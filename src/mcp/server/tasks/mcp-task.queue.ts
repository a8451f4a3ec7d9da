/** Runs one task by id (claims it, runs the tool, stores the outcome). */
export type McpTaskWork = (taskId: string) => Promise<void>;

/**
 * Where tasks wait for a worker: a Bull queue that every replica consumes, or the process that
 * created them. The queue carries only the task id; the row holds the rest.
 */
export interface McpTaskQueue {
  /** True when the queue hands a job whose worker died to another worker (Bull's stalled jobs). */
  readonly redelivers: boolean;
  /** Starts consuming with `concurrency` tasks at once (0: this process runs none). */
  start(work: McpTaskWork, concurrency: number): Promise<void>;
  /** Queues a task. */
  enqueue(taskId: string): Promise<void>;
  /** Stops consuming and lets go of the connection. */
  close(): Promise<void>;
}
