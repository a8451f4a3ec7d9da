import type Redis from 'ioredis';
import type { McpTokenStore } from './mcp-client-auth.interface';

/** Deletes a key only while it still holds the given value (a newer token stays). */
const DELETE_IF_SAME = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

/**
 * Tokens shared by every process on one Redis (the Bull queue's connection), so N workers
 * fetch one token instead of N. Keys are `<prefix>token:<hash>` and `<prefix>lock:<hash>`;
 * a token lives as long as the token itself, minus a margin.
 */
export class RedisTokenStore implements McpTokenStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** @inheritdoc */
  get(key: string): Promise<string | null> {
    return this.redis.get(`${this.prefix}token:${key}`);
  }

  /** @inheritdoc */
  async set(key: string, token: string, ttlMs: number): Promise<void> {
    await this.redis.set(`${this.prefix}token:${key}`, token, 'PX', Math.max(1, Math.floor(ttlMs)));
  }

  /** @inheritdoc */
  async delete(key: string, token: string): Promise<void> {
    await this.redis.eval(DELETE_IF_SAME, 1, `${this.prefix}token:${key}`, token);
  }

  /** @inheritdoc */
  async lock(key: string, ttlMs: number): Promise<boolean> {
    return (
      (await this.redis.set(`${this.prefix}lock:${key}`, '1', 'PX', Math.max(1, Math.floor(ttlMs)), 'NX')) === 'OK'
    );
  }

  /** @inheritdoc */
  async unlock(key: string): Promise<void> {
    await this.redis.del(`${this.prefix}lock:${key}`);
  }
}
