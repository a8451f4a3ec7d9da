import type Redis from 'ioredis';
import { createRedisClient, type McpRedisConnection } from '../../redis-connection';

/**
 * The Redis pub/sub of the calls of one Bull queue: per call, the channel on which its worker
 * publishes progress and log messages (named by the job id, so the caller subscribes before it
 * enqueues), and the pair through which the server's requests of the call reach its caller and
 * the answers come back; per queue, the channel on which callers ask workers to abort a running call. One
 * subscriber connection per process serves every channel, opened on first use.
 */
export class BullCallChannels {
  private subscriber?: Redis;
  private readonly handlers = new Map<string, (message: string) => void>();

  constructor(
    private readonly client: Redis,
    /** `<prefix>:<queue name>`: every channel and key of the queue starts with it. */
    private readonly base: string,
    /**
     * Where the subscriber connects (as the queue's connections do); a duplicate of `client` when
     * absent (a host's Bull options with their own `createClient`).
     */
    private readonly redis?: McpRedisConnection,
  ) {}

  /** Where the worker of call `id` publishes its progress and log messages. */
  eventsChannel(id: string): string {
    return `${this.base}:mcp-call-events:${id}`;
  }

  /** Where the worker of call `id` publishes the server's requests for the caller to answer. */
  requestsChannel(id: string): string {
    return `${this.base}:mcp-call-requests:${id}`;
  }

  /** Where the caller of call `id` publishes its answers to the server's requests. */
  answersChannel(id: string): string {
    return `${this.base}:mcp-call-answers:${id}`;
  }

  /** Set while the caller of call `id` listens for the server's requests (expires with the call). */
  answererKey(id: string): string {
    return `${this.base}:mcp-answerer:${id}`;
  }

  /** Where callers publish the id of a running call to abort. */
  get abortChannel(): string {
    return `${this.base}:mcp-call-abort`;
  }

  /** Set when call `id` was aborted, for a worker that starts it after the abort was published. */
  abortedKey(id: string): string {
    return `${this.base}:mcp-aborted:${id}`;
  }

  /** Channels this process listens on now (for tests and metrics). */
  get subscriptions(): number {
    return this.handlers.size;
  }

  /**
   * Subscribes `handler` to `channel`; resolves once Redis confirmed, to the function that
   * unsubscribes. That function resolves once Redis confirmed too: every message published
   * before it was called has reached the handler by then.
   */
  async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    this.handlers.set(channel, handler);
    try {
      await this.connection().subscribe(channel);
    } catch (error) {
      this.handlers.delete(channel);
      throw error;
    }
    return async () => {
      try {
        await this.connection().unsubscribe(channel);
      } finally {
        this.handlers.delete(channel);
      }
    };
  }

  /** Drops the subscriber connection. */
  close(): void {
    this.handlers.clear();
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }

  private connection(): Redis {
    if (!this.subscriber) {
      const subscriber =
        this.redis === undefined
          ? this.client.duplicate()
          : (createRedisClient(this.redis, 'subscriber', 'McpClientModule redis (Bull)') as Redis);
      subscriber.on('message', (channel: string, message: string) => this.handlers.get(channel)?.(message));
      // The queue's own connection reports outages; this one reconnects and resubscribes by itself.
      subscriber.on('error', () => undefined);
      this.subscriber = subscriber;
    }
    return this.subscriber;
  }
}
