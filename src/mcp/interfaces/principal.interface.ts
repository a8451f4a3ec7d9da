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
}

/**
 * What an authorizer may return for an accepted token: a bare string or number (used as both key
 * and label), or an object with `key` and optionally `label`. Any falsy value rejects the token.
 */
export type McpAuthResult =
  | string
  | number
  | { key: string | number; label?: string; [extra: string]: unknown }
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
