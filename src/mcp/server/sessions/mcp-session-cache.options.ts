/**
 * The in-process cache of a mount's 2025-era sessions (`sessions.cache`). A session found in the
 * store is served from memory for `ttlMs`, so a request needs no database round trip for its
 * session; a DELETE, an idle expiry or a `logging/setLevel` on any replica drops the cached copy
 * on every replica over the session bus (Redis pub/sub with the mount's `redis`). While a replica's
 * Redis subscription is down it asks the store on every request; where messages are lost without
 * the replica noticing, `ttlMs` is the longest it may go on serving the old record.
 */
export interface McpSessionCacheOptions {
  /**
   * How long a session read from the store is served from memory before the store is asked
   * again, counted from the read (using the session does not extend it). The bound on serving a
   * session ended on another replica while the bus is down.
   * @default 1000
   */
  ttlMs?: number;
  /**
   * Most sessions kept per mount and process; beyond it the least recently used one is dropped.
   * @default 10_000
   */
  maxEntries?: number;
}

/** The cache settings after defaults were applied; `false` when the cache is off. */
export type McpResolvedSessionCache = Required<McpSessionCacheOptions> | false;

/** Defaults of `McpSessionCacheOptions`. */
export const DEFAULT_SESSION_CACHE: Required<McpSessionCacheOptions> = {
  ttlMs: 1000,
  maxEntries: 10_000,
};
