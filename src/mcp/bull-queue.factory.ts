import type Bull from 'bull';
import type { Queue, QueueOptions } from 'bull';
import { requireOptionalPeer } from './optional-peer';
import type { McpRedisOutageLog } from './redis-outage-log';
import { createRedisClient, redisKeyPrefix, type McpRedisClient, type McpRedisConnection } from './redis-connection';

/** One Bull queue of the module: where it lives and what it is for. */
export interface McpBullQueueSpec {
  /** The option that needs the queue, for a missing `bull` (`'McpModule tasks (Bull)'`). */
  feature: string;
  /** What the queue is, for the outage lines (`'task queue'`, `'call queue'`, `'retention queue'`). */
  role: string;
  /** The queue's name. */
  name: string;
  /** Where Redis is (URL, ioredis or Sentinel options, Cluster); `options` alone when absent. */
  redis?: McpRedisConnection;
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
  const { redis: inOptions, ...options } = spec.options ?? {};
  const connection = queueConnection(spec);
  if (connection === undefined) {
    const queue = new BullQueue<T>(spec.name, { ...options, ...(inOptions ? { redis: inOptions } : {}) });
    outages.watch(queue, `${spec.role} "${spec.name}"`);
    return queue;
  }
  // Bull closes only the connections it made itself: the ones made here join its list.
  const made: McpRedisClient[] = [];
  let created: Queue<T> | undefined;
  const createClient = (type: 'client' | 'subscriber' | 'bclient') => {
    const client = createRedisClient(connection, type, spec.feature);
    made.push(client);
    ownedClients(created)?.push(client);
    return client as never;
  };
  const prefix = bullKeyPrefix(spec);
  const queue = new BullQueue<T>(spec.name, { ...options, prefix, createClient });
  created = queue;
  ownedClients(queue)?.push(...made);
  outages.watch(queue, `${spec.role} "${spec.name}"`);
  return queue;
}

/**
 * The connection a queue is made on: the spec's `redis`, else a Redis given in Bull's options
 * (the client's, a host's `BullModule.forRoot`), which is connected the same way; none when Bull's
 * own `createClient` is given.
 */
export function queueConnection(spec: Pick<McpBullQueueSpec, 'redis' | 'options'>): McpRedisConnection | undefined {
  return spec.redis ?? (spec.options?.createClient ? undefined : spec.options?.redis);
}

/**
 * The key prefix of a queue's keys as Bull writes them: Bull's `prefix` (`'bull'` by default),
 * hash-tagged on a Cluster. Keys the module keeps beside a queue's (markers, tokens) start with it.
 */
export function bullKeyPrefix(spec: Pick<McpBullQueueSpec, 'redis' | 'options'>): string {
  return redisKeyPrefix(spec.options?.prefix ?? 'bull', queueConnection(spec));
}

/** Bull's list of the connections `close` ends (not in its types). */
function ownedClients(queue: Queue<unknown> | undefined): McpRedisClient[] | undefined {
  return (queue as unknown as { clients?: McpRedisClient[] } | undefined)?.clients;
}

/**
 * Whether the queue's command connection is ready. While it is not, Bull queues commands until it
 * is back, so a caller that must not wait (a health check, a request) asks first.
 */
export function redisReady(queue: Queue<unknown>): boolean {
  return queue.client.status === 'ready';
}
