import type Bull from 'bull';
import type { Queue, QueueOptions } from 'bull';
import type { RedisOptions } from 'ioredis';
import { requireOptionalPeer } from './optional-peer';
import type { McpRedisOutageLog } from './redis-outage-log';

/** One Bull queue of the module: where it lives and what it is for. */
export interface McpBullQueueSpec {
  /** The option that needs the queue, for a missing `bull` (`'McpModule tasks (Bull)'`). */
  feature: string;
  /** What the queue is, for the outage lines (`'task queue'`, `'call queue'`, `'retention queue'`). */
  role: string;
  /** The queue's name. */
  name: string;
  /** A Redis URL or ioredis options; `options.redis` is used when this is absent. */
  redis?: string | RedisOptions;
  /** Bull's options (prefix, settings, the Redis of `options.redis`). */
  options?: QueueOptions;
}

/**
 * Builds every Bull queue of the module (the call queue, the task queue, the retention schedule),
 * so that each meets Redis the same way: Bull loaded as the optional peer it is (a missing
 * package is an `McpConfigurationError` naming `feature`), the connection given as a URL or as
 * options, and the connection's errors during an outage logged through `outages` as
 * `<role> "<name>": <message>`, at most once per line and window. Bull and ioredis
 * reconnect by themselves; what a caller does while the connection is down is the caller's (see
 * `redisReady`).
 */
export function createBullQueue<T>(spec: McpBullQueueSpec, outages: McpRedisOutageLog): Queue<T> {
  const BullQueue = requireOptionalPeer<typeof Bull>('bull', spec.feature);
  const options = spec.options ?? {};
  const queue =
    typeof spec.redis === 'string'
      ? new BullQueue<T>(spec.name, spec.redis, options)
      : new BullQueue<T>(spec.name, spec.redis ? { ...options, redis: spec.redis } : options);
  outages.watch(queue, `${spec.role} "${spec.name}"`);
  return queue;
}

/**
 * Whether the queue's command connection is ready. While it is not, Bull queues commands until it
 * is back, so a caller that must not wait (a health check, a request) asks first.
 */
export function redisReady(queue: Queue<unknown>): boolean {
  return queue.client.status === 'ready';
}
