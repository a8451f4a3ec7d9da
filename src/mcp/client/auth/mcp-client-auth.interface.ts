/** A bearer challenge the server answered with (`WWW-Authenticate: Bearer ...` of a 401 or 403). */
export interface McpAuthChallenge {
  /** The HTTP status: 401 (no or bad token) or 403 (not enough scope). */
  status: 401 | 403;
  /** The challenge's `error`, e.g. `invalid_token` or `insufficient_scope`; null when absent. */
  error: string | null;
  /** The challenge's `scope`: the scopes the request needs, space-separated; null when absent. */
  scope: string | null;
  /** The challenge's `resource_metadata`: where the server's Protected Resource Metadata is (RFC 9728). */
  resourceMetadata: string | null;
}

/** Which server a token is for. */
export interface McpAuthTarget {
  /** The MCP endpoint. */
  url: URL;
  /** The configured server name, when the token is for a call (the HTTP transport always says). */
  server?: string;
  /**
   * Who the call is made for (the call's `scopeKey`, `''` when shared), when the token is for a
   * call: a provider of per-user tokens (`authorizationCode`) keeps one grant per scope key.
   */
  scopeKey?: string;
}

/**
 * Where tokens of outbound OAuth are kept between calls: in Redis when the client's queue is
 * Bull (so every worker shares one token), else in this process's memory.
 */
export interface McpTokenStore {
  /** The token kept under `key`, or null. */
  get(key: string): Promise<string | null>;
  /** Keeps `token` under `key` for `ttlMs`. */
  set(key: string, token: string, ttlMs: number): Promise<void>;
  /** Forgets the token under `key`, only if it still is `token` (a newer one stays). */
  delete(key: string, token: string): Promise<void>;
  /** Takes a short lock named `key` for `ttlMs`; false when another process holds it. */
  lock(key: string, ttlMs: number): Promise<boolean>;
  /** Releases a lock taken with `lock`. */
  unlock(key: string): Promise<void>;
}

/**
 * Supplies the bearer token of an HTTP server (`auth` of an HTTP server entry). The transport
 * asks for a token before each request; after a 401, or a 403 `insufficient_scope`, it calls
 * `invalidate` and, when `getToken` then gives a different token, sends the request once more.
 *
 * Built-in providers: `staticToken(token)`, `clientCredentials({...})` and `authorizationCode({...})`.
 */
export interface McpClientAuth {
  /**
   * The token to send as `Authorization: Bearer <token>`.
   * @param target the server asking; `store` is the client's shared token store.
   */
  getToken(target: McpAuthTarget, store: McpTokenStore): Promise<string>;
  /**
   * Drops the token the server refused, so that the next `getToken` brings another.
   * @param refusedToken the token the server refused.
   * @param challenge what the server said, when it said it with `WWW-Authenticate`.
   */
  invalidate(
    target: McpAuthTarget,
    store: McpTokenStore,
    refusedToken?: string,
    challenge?: McpAuthChallenge,
  ): Promise<void>;
}
