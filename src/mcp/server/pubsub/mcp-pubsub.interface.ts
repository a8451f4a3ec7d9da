/** Receives the payloads published on one channel. */
export type McpPubSubListener = (payload: string) => void;

/**
 * The message fabric between the replicas of an app: publish/subscribe on named channels plus
 * short-lived ownership claims (who holds a session's GET stream). The process-local flavour
 * reaches nobody else; the Redis flavour reaches every replica subscribed to the channel.
 */
export interface McpPubSub {
  /** True when messages reach other processes. */
  readonly distributed: boolean;
  /** Sends `payload` to every subscriber of `channel` (this process included). */
  publish(channel: string, payload: string): Promise<void>;
  /** Starts delivering the channel's payloads to `listener`; resolves once the subscription is active. */
  subscribe(channel: string, listener: McpPubSubListener): Promise<void>;
  /** Stops delivering the channel's payloads to `listener`. */
  unsubscribe(channel: string, listener: McpPubSubListener): Promise<void>;
  /**
   * Takes (or keeps, when `owner` already holds it) the claim `key` for `ttlMs`. Resolves false
   * when another owner holds it.
   */
  claim(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Gives the claim up, if `owner` still holds it. */
  release(key: string, owner: string): Promise<void>;
  /** Lets go of the connections this instance uses. */
  close(): Promise<void>;
  /**
   * Optional: false while messages from other processes cannot arrive (the subscription
   * connection is down). Absent means always true.
   */
  readonly listening?: boolean;
  /**
   * Optional: calls `listener` each time the subscription connection is back after a drop.
   * Messages published meanwhile were lost. Returns the unsubscribe.
   */
  onReconnect?(listener: () => void): () => void;
  /**
   * Optional: one round trip to the broker (Redis PING) for health checks; rejects when it is
   * unreachable. Absent for the process-local pub/sub, which has no broker.
   */
  ping?(): Promise<{ latencyMs: number; listening: boolean }>;
}
