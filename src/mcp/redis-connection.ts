import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { requireOptionalPeer } from './optional-peer';

/** A Redis Cluster: its seed nodes and the ioredis Cluster options. */
export interface McpRedisClusterConnection {
  /** The Cluster's seed nodes and options. */
  cluster: {
    /** Seed nodes (`'host:port'`, a port, or `{ host, port }`); ioredis discovers the rest. */
    nodes: ClusterNode[];
    /** ioredis Cluster options (`redisOptions` apply to each node's connection). */
    options?: ClusterOptions;
  };
}

/**
 * Where a module's Redis is: a URL, ioredis options (with `sentinels` and `name` for a Sentinel
 * group), or a Cluster description. Every Redis user of the module connects through
 * `createRedisClient`.
 */
export type McpRedisConnection = string | RedisOptions | McpRedisClusterConnection;

/** A connection `createRedisClient` made: a single node (direct or via Sentinel) or a Cluster. */
export type McpRedisClient = Redis | Cluster;

/** What a connection is for; subscriber and blocking connections never queue commands for retry. */
export type McpRedisRole = 'client' | 'subscriber' | 'bclient';

/** True when the connection describes a Redis Cluster. */
export function isRedisCluster(
  connection: McpRedisConnection | null | undefined,
): connection is McpRedisClusterConnection {
  return typeof connection === 'object' && connection !== null && 'cluster' in connection;
}

/**
 * A key prefix for the connection: unchanged on a single node, hash-tagged (`{prefix}`) on a
 * Cluster so that every key under it lives in one slot (Bull's scripts and the multi-key commands
 * need it). A prefix that already carries a tag is kept.
 */
export function redisKeyPrefix(prefix: string, connection: McpRedisConnection | null | undefined): string {
  if (!isRedisCluster(connection) || /\{[^}]+\}/.test(prefix)) return prefix;
  return `{${prefix}}`;
}

/**
 * Opens a connection of `role` to the described Redis, with `extra` ioredis options on top.
 * Subscriber and blocking connections skip the ready check and never bound retries (as Bull
 * requires); ioredis follows a Sentinel failover and a Cluster's slot moves by itself.
 */
export function createRedisClient(
  connection: McpRedisConnection,
  role: McpRedisRole,
  feature: string,
  extra: RedisOptions = {},
): McpRedisClient {
  const ioredis = requireOptionalPeer<typeof import('ioredis')>('ioredis', feature);
  const own: RedisOptions = {
    ...extra,
    ...(role === 'client' ? {} : { maxRetriesPerRequest: null, enableReadyCheck: false }),
  };
  if (isRedisCluster(connection)) {
    const options = connection.cluster.options ?? {};
    return new ioredis.Cluster(connection.cluster.nodes, {
      ...options,
      redisOptions: { ...options.redisOptions, ...own },
    });
  }
  if (typeof connection === 'string') return new ioredis.Redis(connection, own);
  return new ioredis.Redis({ ...connection, ...own });
}
