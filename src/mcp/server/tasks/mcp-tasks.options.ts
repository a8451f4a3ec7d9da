import type { RedisOptions } from 'ioredis';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { invalidOptionMessage } from '../../mcp.messages';

/**
 * How a mount runs task-augmented tool calls (`tasks` option). Tasks run on a Bull queue when the
 * mount has Redis (`tasks.redis`, else `pubsub.redis`): every replica's process consumes it, so
 * any replica creates a task and any worker runs it. Without Redis they run in the process that
 * created them.
 */
export interface McpTasksOptions {
  /**
   * The Redis of the task queue.
   * @default the `pubsub.redis` of the mount; in process when neither is set
   */
  redis?: string | RedisOptions;
  /**
   * How many tasks this process runs at once; `0` makes a replica that creates and serves tasks
   * but runs none (on the queue only).
   * @default 4
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
   * @default `streams.clientRequestTimeoutMs` (300000)
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
   * @default 'mcp-tasks-<mount>'
   */
  queueName?: string;
}

/** The `tasks` option after defaults (see `McpTasksOptions` for each field). */
export interface McpResolvedTasksOptions {
  /** Redis of the queue; null: tasks run in process. */
  redis: string | RedisOptions | null;
  /** Tasks this process runs at once. */
  concurrency: number;
  /** Lifetime when the client asks for none, in milliseconds. */
  defaultTtlMs: number;
  /** Longest lifetime, in milliseconds. */
  maxTtlMs: number;
  /** Suggested polling interval, in milliseconds. */
  pollIntervalMs: number;
  /** Bound of one `tasks/result` wait, in milliseconds. */
  resultTimeoutMs: number;
  /** Bound of one wait for client input inside a task, in milliseconds. */
  inputTimeoutMs: number;
  /** Bull lock duration, in milliseconds. */
  lockDurationMs: number;
  /** The Bull queue name. */
  queueName: string;
}

function integer(mount: string, option: string, value: number | undefined, fallback: number, minimum: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < minimum) {
    throw new McpConfigurationError(
      invalidOptionMessage(mount, `tasks.${option}`, minimum === 0 ? 'an integer of 0 or more' : 'a positive integer'),
    );
  }
  return value;
}

/** Applies the defaults of the `tasks` option (`clientRequestTimeoutMs`: the default of `inputTimeoutMs`). */
export function resolveTasksOptions(
  mount: string,
  options: McpTasksOptions | undefined,
  pubsubRedis: string | RedisOptions | undefined,
  clientRequestTimeoutMs = 300_000,
): McpResolvedTasksOptions {
  const maxTtlMs = integer(mount, 'maxTtlMs', options?.maxTtlMs, 86_400_000, 1);
  return {
    redis: options?.redis ?? pubsubRedis ?? null,
    concurrency: integer(mount, 'concurrency', options?.concurrency, 4, 0),
    defaultTtlMs: Math.min(integer(mount, 'defaultTtlMs', options?.defaultTtlMs, 3_600_000, 1), maxTtlMs),
    maxTtlMs,
    pollIntervalMs: integer(mount, 'pollIntervalMs', options?.pollIntervalMs, 1000, 1),
    resultTimeoutMs: integer(mount, 'resultTimeoutMs', options?.resultTimeoutMs, 60_000, 1),
    inputTimeoutMs: integer(mount, 'inputTimeoutMs', options?.inputTimeoutMs, clientRequestTimeoutMs, 1),
    lockDurationMs: integer(mount, 'lockDurationMs', options?.lockDurationMs, 30_000, 1),
    queueName: options?.queueName ?? `mcp-tasks-${mount}`,
  };
}
