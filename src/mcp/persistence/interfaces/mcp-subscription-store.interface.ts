/** One `resources/subscribe` of a session, as a store keeps it. */
export interface McpSubscriptionRecord {
  /** Row id (UUID). */
  id: string;
  /** The mount serving the session. */
  mount: string;
  /** The subscribing session's `Mcp-Session-Id`. */
  sessionId: string;
  /** The resource URI the session watches. */
  uri: string;
  /** When the session subscribed. */
  createdAt: Date;
}

/** A live session watching a resource URI, with the principal its session is bound to. */
export interface McpResourceSubscriber {
  /** The subscribing session's `Mcp-Session-Id`. */
  sessionId: string;
  /** Key of the principal the session is bound to, as its session record holds it. */
  principalKey: string;
}

/**
 * The resource subscriptions of one mount. Shared by every replica: the replica that learns
 * about a change finds the subscribers, whichever replica took the subscription.
 */
export interface McpSubscriptionStore {
  /** Records that `sessionId` watches `uri`; subscribing twice is one subscription. */
  subscribe(sessionId: string, uri: string): Promise<void>;
  /** Forgets that `sessionId` watches `uri`; a no-op when it did not. */
  unsubscribe(sessionId: string, uri: string): Promise<void>;
  /**
   * How many URIs other than `exceptUri` the session watches on the mount: `resources/subscribe`
   * refuses a new URI at the `limits.subscriptionsPerSession` cap (re-subscribing is still fine).
   */
  countForSession(sessionId: string, exceptUri?: string): Promise<number>;
  /** The live (not terminated, not idle) sessions of the mount watching `uri`, sorted by session id. */
  subscribers(uri: string): Promise<string[]>;
  /**
   * The same sessions as `subscribers`, each with its principal key: `McpResourceNotifier` leaves
   * out the sessions whose principal the resource is switched off for, so the key must come with
   * the one lookup it already makes (a store that joins the session rows reads it there).
   */
  subscriberSessions(uri: string): Promise<McpResourceSubscriber[]>;
}
