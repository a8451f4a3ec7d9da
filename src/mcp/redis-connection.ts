import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import type { OptionValidatorInput } from './options/options-model';
import { McpConfigurationError } from './errors/mcp-configuration.errors';
import { requireOptionalPeer } from './optional-peer';

/**
 * A Redis Cluster: its seed nodes and the ioredis Cluster options. On a Cluster the module
 * hash-tags its key prefixes (Bull's `{bull}`, the resumption log's and the rate limits' keys), so
 * that the keys one script or multi-key command touches live in one slot.
 */
export interface McpRedisClusterConnection {
  /** A Redis Cluster's seed nodes and options: this key makes `redis` a Cluster description. */
  cluster: McpRedisClusterConnection.Cluster;
}

/** The parts of `McpRedisClusterConnection`. */
export declare namespace McpRedisClusterConnection {
  /** Where a Cluster is, and how ioredis talks to it. */
  export interface Cluster {
    /** Seed nodes (`'host:port'`, a port, or `{ host, port }`); ioredis discovers the rest. List several. */
    nodes: ClusterNode[];
    /** ioredis Cluster options (`redisOptions` apply to each node's connection, passwords and TLS included). */
    options?: ClusterOptions;
  }
}

/**
 * Where a module's Redis is (the `redis` option of `McpModule` and of `McpClientModule`): a
 * `redis://` or `rediss://` URL, ioredis options (with `sentinels` and `name` for a Sentinel
 * group), or a Cluster description (`{ cluster: { nodes, options } }`). Every Redis user of the
 * module (queues, session bus, resumption log, markers, token store, retention schedule) follows it.
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
  return isRedisCluster(connection) ? hashTagged(prefix) : prefix;
}

/** `{key}`, so that Redis Cluster hashes only `key` (the slot of `{key}` and `{key}:more` is one); a key with a tag is kept. */
export function hashTagged(key: string): string {
  return /\{[^}]+\}/.test(key) ? key : `{${key}}`;
}

/**
 * The Redis Cluster hash slot of `key` (CRC16-XMODEM of the key, or of its first non-empty
 * `{tag}`, modulo 16384), as `CLUSTER KEYSLOT` computes it.
 */
export function redisKeySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

/**
 * Calls `listener` each time a Cluster connection loses the node that serves `key`'s slot (its
 * master was killed, or left). ioredis keeps a Cluster `ready` through it and sends the slot's
 * commands to the new master once the cluster has failed over; what was in flight on the lost
 * node (a reply, a pub/sub message, an unreplicated write) is gone, which only the caller knows
 * how to handle. A single-node connection reports the same by emitting `close`.
 */
export function onClusterSlotLost(cluster: Cluster, key: string, listener: () => void): void {
  const slot = redisKeySlot(key);
  cluster.on('-node', (node: Redis) => {
    const owner = cluster.slots[slot]?.[0];
    if (owner === `${node.options.host}:${node.options.port}`) listener();
  });
}

/** True when the client is a Cluster connection (not one node's). */
export function isClusterClient(client: McpRedisClient): client is Cluster {
  return (client as Cluster).isCluster === true;
}

/** True when the connection reaches its master through Sentinel (ioredis options with `sentinels`). */
export function isSentinelClient(client: McpRedisClient): boolean {
  if (isClusterClient(client)) return false;
  const sentinels = client.options?.sentinels;
  return Array.isArray(sentinels) && sentinels.length > 0;
}

/**
 * How many replicas must acknowledge a write the module cannot afford to lose in a failover (the
 * at-most-once mark of a call) when the app did not say: `'auto'` on a Sentinel group or a
 * Cluster, where a replica may be promoted (one, while the master has a replica connected; none
 * while it has none); 0 on a single node (a URL), where nothing is waited for.
 */
export function defaultMarkReplicas(client: McpRedisClient): 0 | 'auto' {
  return isClusterClient(client) || isSentinelClient(client) ? 'auto' : 0;
}

/**
 * How many replicas a master reports connected in its `ROLE` reply
 * (`['master', offset, [[ip, port, offset], ...]]`): Redis lists only those whose link is up and
 * whose first sync is done. `undefined` for any other reply (a replica's, a sentinel's, an error).
 */
export function connectedReplicasOf(role: unknown): number | undefined {
  if (!Array.isArray(role) || role[0] !== 'master' || !Array.isArray(role[2])) return undefined;
  return role[2].length;
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
    if (role === 'subscriber')
      return clusterSubscriber(ioredis, connection.cluster.nodes, { ...options.redisOptions, ...own });
    return new ioredis.Cluster(connection.cluster.nodes, {
      ...options,
      redisOptions: { ...options.redisOptions, ...own },
    });
  }
  if (typeof connection === 'string') return new ioredis.Redis(connection, own);
  return new ioredis.Redis({ ...connection, ...own });
}

/** A seed node as an address: `'host:port'` (or a `redis://` URL), a port, or `{ host?, port? }`. */
function seedAddress(node: ClusterNode): { host: string; port: number } {
  if (typeof node === 'number') return { host: '127.0.0.1', port: node };
  if (typeof node === 'string') {
    // Matches every string: each part is optional.
    const [, host, port] = /^(?:rediss?:\/\/)?([^:/]*)(?::(\d+))?/.exec(node)!;
    return { host: host || '127.0.0.1', port: port ? Number(port) : 6379 };
  }
  return { host: node.host ?? '127.0.0.1', port: node.port ?? 6379 };
}

/**
 * The subscriber connection of a Cluster: one node's connection, with no ready check, that moves
 * to the next seed node each time it reconnects. A Cluster forwards every PUBLISH to every node,
 * so any node serves a subscriber. ioredis' own Cluster subscriber is not used: it always runs
 * the ready check, and its INFO, sent after the connection's handshake, meets a connection that a
 * SUBSCRIBE issued meanwhile already switched to subscriber mode: the subscriptions then fail.
 */
function clusterSubscriber(
  ioredis: typeof import('ioredis'),
  nodes: readonly ClusterNode[],
  options: RedisOptions,
): Redis {
  const seeds = nodes.map(seedAddress);
  let current = 0;
  const redis: Redis = new ioredis.Redis({
    ...options,
    ...seeds[0],
    retryStrategy: (times) => {
      current = (current + 1) % seeds.length;
      // ioredis reads the address from these options at each connection attempt.
      Object.assign(redis.options, seeds[current]);
      return Math.min(times * 100, 2_000);
    },
  });
  return redis;
}

/** ioredis options that name a Sentinel group. */
interface SentinelShape {
  sentinels?: unknown;
  name?: unknown;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A Cluster seed node: `'host:port'`, a port, or `{ host?, port }`. */
function isSeedNode(node: unknown): boolean {
  if (typeof node === 'string') return node.length > 0;
  if (typeof node === 'number') return Number.isInteger(node) && node > 0;
  return isPlainObject(node) && (node.port === undefined || typeof node.port === 'number');
}

/**
 * Checks a `redis` option at boot: a `redis://` / `rediss://` URL, ioredis options (a Sentinel
 * group needs a non-empty `sentinels` list and the master's `name`), or `{ cluster: { nodes } }`
 * with at least one seed node. The messages name the option and never repeat the value (a URL
 * may carry a password).
 * @throws McpConfigurationError (through `context.invalid`)
 */
export function checkRedisConnection({
  value,
  path,
  context,
}: Pick<OptionValidatorInput, 'value' | 'path' | 'context'>): unknown {
  if (value === undefined) return undefined;
  const refuse = (option: string, expected: string): never => {
    throw new McpConfigurationError(context.invalid(option, expected));
  };
  if (typeof value === 'string') {
    if (!/^rediss?:\/\/./i.test(value))
      refuse(path, 'a redis:// or rediss:// URL, ioredis options or { cluster: { nodes } }');
    return value;
  }
  if (!isPlainObject(value)) refuse(path, 'a redis:// or rediss:// URL, ioredis options or { cluster: { nodes } }');
  const connection = value as Record<string, unknown>;
  if ('cluster' in connection) {
    const cluster = connection.cluster;
    if (!isPlainObject(cluster)) refuse(`${path}.cluster`, 'an object ({ nodes, options? })');
    const { nodes, options } = cluster as Record<string, unknown>;
    if (!Array.isArray(nodes) || nodes.length === 0 || !nodes.every(isSeedNode))
      refuse(`${path}.cluster.nodes`, "a non-empty list of seed nodes ('host:port', a port or { host, port })");
    if (options !== undefined && !isPlainObject(options))
      refuse(`${path}.cluster.options`, 'ioredis Cluster options (an object)');
    return value;
  }
  const { sentinels, name } = connection as SentinelShape;
  if (sentinels !== undefined) {
    if (!Array.isArray(sentinels) || sentinels.length === 0 || !sentinels.every(isPlainObject))
      refuse(`${path}.sentinels`, 'a non-empty list of sentinel addresses ({ host, port })');
    if (typeof name !== 'string' || name.length === 0)
      refuse(
        `${path}.name`,
        'the name of the master the sentinels watch (a non-empty string) when sentinels are given',
      );
  }
  return value;
}
