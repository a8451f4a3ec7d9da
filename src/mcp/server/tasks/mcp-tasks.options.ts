import type { RedisOptions } from 'ioredis';
import type { ResolvedOptions } from '../../options/options-model';
import type { MCP_MODULE_OPTIONS_MODEL } from '../mcp-module-model.options';

/**
 * How a mount runs task-augmented tool calls (`tasks` option). Tasks run on a Bull queue when the
 * mount has Redis (its `redis` option): every replica's process consumes it, so
 * any replica creates a task and any worker runs it. Without Redis they run in the process that
 * created them.
 */
export interface McpTasksOptions {
  /**
   * How many tasks this process runs at once; `0` makes a replica that creates and serves tasks
   * but runs none (on the queue only).
   * @default 4
   * @minimum 0
   */
  concurrency?: number;
  /**
   * The lifetime of a task when the client asks for none, in milliseconds.
   * @default 3600000 (one hour)
   */
  defaultTtlMs?: number;
  /**
   * The longest lifetime a client may ask for; longer requests are cut to it.
   * @default 86400000 (one day)
   */
  maxTtlMs?: number;
  /**
   * The polling interval suggested to clients, in milliseconds.
   * @default 1000
   */
  pollIntervalMs?: number;
  /**
   * How long `tasks/result` waits for a task that is not over before it answers an error asking
   * the client to call again, in milliseconds.
   * @default 60000
   */
  resultTimeoutMs?: number;
  /**
   * How long a task's handler waits for the answer to one `ctx.elicit`, `sample` or `listRoots`
   * (the task is `input_required` meanwhile) before it rejects with `McpClientRequestTimeoutError`,
   * in milliseconds.
   * @default (`streams.clientRequestTimeoutMs`, 300_000)
   */
  inputTimeoutMs?: number;
  /**
   * How long a worker's hold on a queued task lasts without renewal (Bull's `lockDuration`): a
   * worker silent for longer is taken for dead and its task is found interrupted.
   * @default 30000
   */
  lockDurationMs?: number;
  /**
   * The name of the Bull queue (one per mount).
   * @default ('mcp-tasks-<mount>')
   */
  queueName?: string;
}

/** The `tasks` option after defaults: the Redis of the queue (null: tasks run in process), the queue name and the input bound completed from the mount. */
export type McpResolvedTasksOptions = Omit<
  ResolvedOptions<McpTasksOptions, (typeof MCP_MODULE_OPTIONS_MODEL)['tasks']['options']>,
  'redis' | 'inputTimeoutMs' | 'queueName'
> & { redis: string | RedisOptions | null; inputTimeoutMs: number; queueName: string };
