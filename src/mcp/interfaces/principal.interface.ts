import type { Request } from 'express';

/**
 * Who is calling, after the bearer token was accepted. `key` binds sessions and audit rows;
 * `label` is for people reading the audit trail. The token itself is never stored.
 */
export interface McpPrincipal {
  /** Stable identity used to bind sessions and events (e.g. a user id). */
  key: string;
  /** Human-readable name for logs and the audit trail. */
  label: string;
  /** Whatever the authorizer returned, for tool handlers that need more than key and label. */
  raw: unknown;
  /**
   * The scopes the token grants (OAuth `scope` / `scp`), from the authorizer's `scopes`. The
   * bearer guard always sets it (empty when the authorizer named none); principals built in
   * process (the toolset transport) may leave it out.
   */
  scopes?: readonly string[];
  /** The roles the authorizer found for the caller (e.g. from a JWT claim); set like `scopes`. */
  roles?: readonly string[];
}

/**
 * What an authorizer may return for an accepted token: a bare string or number (used as both key
 * and label), or an object with `key` and optionally `label`, `scopes` (an array, or one
 * space-separated string as in OAuth's `scope`) and `roles`. Any falsy value rejects the token.
 */
export type McpAuthResult =
  | string
  | number
  | {
      key: string | number;
      label?: string;
      scopes?: readonly string[] | string;
      roles?: readonly string[];
      [extra: string]: unknown;
    }
  | null
  | undefined
  | false;

/** An authorizer function: maps a bearer token (and the request) to a principal, or rejects it. */
export type McpAuthorizeFn = (token: string, request: Request) => McpAuthResult | Promise<McpAuthResult>;

/** An injectable authorizer class, resolved through Nest's DI. */
export interface McpAuthorizer {
  /** Maps a bearer token (and the request) to a principal, or returns a falsy value to reject it. */
  authorize(token: string, request: Request): McpAuthResult | Promise<McpAuthResult>;
}
