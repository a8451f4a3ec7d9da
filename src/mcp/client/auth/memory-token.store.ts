import type { McpTokenStore } from './mcp-client-auth.interface';

/** Tokens of this process only (the inline queue): one per key, forgotten at expiry. */
export class MemoryTokenStore implements McpTokenStore {
  private readonly tokens = new Map<string, { token: string; expiresAt: number }>();
  private readonly locks = new Map<string, number>();

  /** @inheritdoc */
  async get(key: string): Promise<string | null> {
    const entry = this.tokens.get(key);
    if (!entry) return null;
    if (entry.expiresAt > Date.now()) return entry.token;
    this.tokens.delete(key);
    return null;
  }

  /** @inheritdoc */
  async set(key: string, token: string, ttlMs: number): Promise<void> {
    this.tokens.set(key, { token, expiresAt: Date.now() + ttlMs });
  }

  /** @inheritdoc */
  async delete(key: string, token: string): Promise<void> {
    if (this.tokens.get(key)?.token === token) this.tokens.delete(key);
  }

  /** @inheritdoc */
  async lock(key: string, ttlMs: number): Promise<boolean> {
    const until = this.locks.get(key);
    if (until !== undefined && until > Date.now()) return false;
    this.locks.set(key, Date.now() + ttlMs);
    return true;
  }

  /** @inheritdoc */
  async unlock(key: string): Promise<void> {
    this.locks.delete(key);
  }
}
