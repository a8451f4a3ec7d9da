import type { McpPubSub, McpPubSubListener } from './mcp-pubsub.interface';

/**
 * Pub/sub inside one process: what is published reaches the subscribers of this process only,
 * and claims are held in memory. Enough for a single replica (and the default without Redis).
 */
export class McpLocalPubSub implements McpPubSub {
  /** @inheritdoc */
  readonly distributed = false;
  private readonly listeners = new Map<string, Set<McpPubSubListener>>();
  private readonly claims = new Map<string, { owner: string; until: number }>();

  /** @inheritdoc */
  async publish(channel: string, payload: string): Promise<void> {
    for (const listener of this.listeners.get(channel) ?? []) listener(payload);
  }

  /** @inheritdoc */
  async subscribe(channel: string, listener: McpPubSubListener): Promise<void> {
    const set = this.listeners.get(channel) ?? new Set<McpPubSubListener>();
    set.add(listener);
    this.listeners.set(channel, set);
  }

  /** @inheritdoc */
  async unsubscribe(channel: string, listener: McpPubSubListener): Promise<void> {
    this.listeners.get(channel)?.delete(listener);
  }

  /** @inheritdoc */
  async claim(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const held = this.claims.get(key);
    if (held && held.owner !== owner && held.until > Date.now()) return false;
    this.claims.set(key, { owner, until: Date.now() + ttlMs });
    return true;
  }

  /** @inheritdoc */
  async release(key: string, owner: string): Promise<void> {
    if (this.claims.get(key)?.owner === owner) this.claims.delete(key);
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    this.listeners.clear();
    this.claims.clear();
  }
}
