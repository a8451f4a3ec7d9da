import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { McpBusUnavailableError } from '../../errors/mcp-outage.errors';
import { createRedisClient, type McpRedisConnection } from '../../redis-connection';
import { McpRedisOutageLog } from '../../redis-outage-log';
import type { McpPubSub, McpPubSubListener } from './mcp-pubsub.interface';

/** Takes the claim when it is free or already ours (then extends it). */
const CLAIM_SCRIPT = `local v = redis.call('GET', KEYS[1])
if (not v) or v == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;

/** Drops the claim only when it is still ours. */
const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** The connections of one Redis setting, shared by every mount of the process. */
interface SharedConnections {
  publisher: Redis;
  subscriber: Redis;
  users: number;
  listeners: Map<string, Set<McpPubSubListener>>;
  /** Told when the subscriber is back after a drop (messages published meanwhile were lost). */
  reconnectListeners: Set<() => void>;
}

const shared = new Map<string, SharedConnections>();

const logger = new Logger('McpRedisPubSub');

/** Bound of one bus command (publish, claim, release, the first SUBSCRIBE of a channel). */
export const DEFAULT_BUS_TIMEOUT_MS = 5000;

/** A reconnecting client repeats the same error many times a second: each text is logged once per window. */
const outages = new McpRedisOutageLog(logger);

/**
 * A connection that keeps reconnecting for ever (so the bus heals by itself when Redis is back).
 * Commands do not wait for it: `McpRedisPubSub` refuses them while the connection is down and
 * bounds them otherwise. The subscriber skips the ready check: its INFO command would meet a
 * connection already switched to subscriber mode by a queued SUBSCRIBE.
 */
function connect(config: McpRedisConnection, subscriber: boolean): Redis {
  const redis = createRedisClient(config, subscriber ? 'subscriber' : 'client', 'McpModule redis', {
    maxRetriesPerRequest: null,
  }) as Redis;
  outages.watch(redis, `Redis ${subscriber ? 'subscriber' : 'publisher'}`);
  return redis;
}

function acquire(key: string, config: McpRedisConnection): SharedConnections {
  let connections = shared.get(key);
  if (!connections) {
    const listeners = new Map<string, Set<McpPubSubListener>>();
    const subscriber = connect(config, true);
    subscriber.on('message', (channel: string, payload: string) => {
      for (const listener of listeners.get(channel) ?? []) listener(payload);
    });
    const reconnectListeners = new Set<() => void>();
    let dropped = false;
    subscriber.on('close', () => (dropped = true));
    subscriber.on('ready', () => {
      if (!dropped) return;
      dropped = false;
      for (const listener of reconnectListeners) listener();
    });
    connections = { publisher: connect(config, false), subscriber, users: 0, listeners, reconnectListeners };
    shared.set(key, connections);
  }
  connections.users += 1;
  return connections;
}

/**
 * Pub/sub over Redis: one subscriber connection (and one for commands) per process and Redis
 * setting, whatever the number of mounts using it. Reaches every replica subscribed to a channel.
 * While Redis is away, commands fail at once (or after `timeoutMs`) with
 * `McpBusUnavailableError`, so a request that needs the bus answers 503 instead of hanging;
 * subscriptions are restored by the client when the connection comes back.
 */
export class McpRedisPubSub implements McpPubSub {
  /** @inheritdoc */
  readonly distributed = true;
  private readonly key: string;
  private readonly connections: SharedConnections;
  private readonly mine = new Map<string, Set<McpPubSubListener>>();
  private closed = false;
  private readonly reconnectListeners = new Set<() => void>();

  constructor(
    config: McpRedisConnection,
    private readonly timeoutMs = DEFAULT_BUS_TIMEOUT_MS,
  ) {
    this.key = typeof config === 'string' ? config : JSON.stringify(config);
    this.connections = acquire(this.key, config);
  }

  /** @inheritdoc */
  get listening(): boolean {
    return this.connections.subscriber.status === 'ready';
  }

  /** @inheritdoc */
  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    this.connections.reconnectListeners.add(listener);
    return () => {
      this.reconnectListeners.delete(listener);
      this.connections.reconnectListeners.delete(listener);
    };
  }

  /** The command connection (shared with the process's other mounts), for the event log. */
  get commands(): Redis {
    return this.connections.publisher;
  }

  /**
   * Runs a command unless the connection is known to be down; bounds the wait. A command issued
   * on a healthy connection that then drops may still run after the deadline (ioredis re-sends
   * it on reconnect); the bus' commands are safe to repeat.
   */
  private command<T>(client: Redis, operation: string, run: () => Promise<T>): Promise<T> {
    if (!['ready', 'connect', 'connecting', 'wait'].includes(client.status)) {
      return Promise.reject(new McpBusUnavailableError(`${operation} (the connection is ${client.status})`));
    }
    let timer: NodeJS.Timeout | undefined;
    const work = run();
    work.catch(() => undefined);
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new McpBusUnavailableError(`${operation} (no answer within ${this.timeoutMs} ms)`)),
        this.timeoutMs,
      );
      timer.unref?.();
    });
    return Promise.race([
      work.catch((error: unknown) => Promise.reject(new McpBusUnavailableError(operation, { cause: error }))),
      deadline,
    ]).finally(() => clearTimeout(timer));
  }

  /**
   * @inheritdoc
   * A PING on the command connection (bounded like every bus command), with the subscriber's state.
   */
  async ping(): Promise<{ latencyMs: number; listening: boolean }> {
    const started = Date.now();
    await this.command(this.connections.publisher, 'ping', () => this.connections.publisher.ping());
    return { latencyMs: Date.now() - started, listening: this.listening };
  }

  /** @inheritdoc */
  async publish(channel: string, payload: string): Promise<void> {
    await this.command(this.connections.publisher, 'publish', () =>
      this.connections.publisher.publish(channel, payload),
    );
  }

  /** @inheritdoc */
  async subscribe(channel: string, listener: McpPubSubListener): Promise<void> {
    const { listeners, subscriber } = this.connections;
    const set = listeners.get(channel) ?? new Set<McpPubSubListener>();
    const first = set.size === 0;
    set.add(listener);
    listeners.set(channel, set);
    this.mine.set(channel, (this.mine.get(channel) ?? new Set()).add(listener));
    if (first) await this.command(subscriber, 'subscribe', () => subscriber.subscribe(channel));
  }

  /** @inheritdoc */
  async unsubscribe(channel: string, listener: McpPubSubListener): Promise<void> {
    const set = this.connections.listeners.get(channel);
    this.mine.get(channel)?.delete(listener);
    if (!set?.delete(listener) || set.size > 0) return;
    this.connections.listeners.delete(channel);
    await this.connections.subscriber.unsubscribe(channel);
  }

  /** @inheritdoc */
  async claim(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const { publisher } = this.connections;
    return (
      (await this.command(publisher, 'stream claim', () =>
        publisher.eval(CLAIM_SCRIPT, 1, key, owner, String(ttlMs)),
      )) === 1
    );
  }

  /**
   * Runs a Lua script on the command connection, bounded like every bus command (refused at once
   * while the connection is down, `McpBusUnavailableError` past `timeoutMs`).
   */
  async script(operation: string, source: string, keys: readonly string[], args: readonly string[]): Promise<unknown> {
    const { publisher } = this.connections;
    return this.command(publisher, operation, () => publisher.eval(source, keys.length, ...keys, ...args));
  }

  /** @inheritdoc */
  async release(key: string, owner: string): Promise<void> {
    const { publisher } = this.connections;
    await this.command(publisher, 'stream release', () => publisher.eval(RELEASE_SCRIPT, 1, key, owner));
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.reconnectListeners) this.connections.reconnectListeners.delete(listener);
    this.reconnectListeners.clear();
    for (const [channel, listeners] of this.mine)
      for (const listener of listeners) await this.unsubscribe(channel, listener).catch(() => undefined);
    this.connections.users -= 1;
    if (this.connections.users > 0) return;
    shared.delete(this.key);
    // QUIT waits behind the commands queued while the connection is down (which would then never
    // end): a connection that is not ready is dropped instead.
    const end = async (client: Redis): Promise<void> => {
      if (client.status === 'ready') await client.quit().catch(() => undefined);
      else client.disconnect();
    };
    await Promise.all([end(this.connections.subscriber), end(this.connections.publisher)]);
  }
}
