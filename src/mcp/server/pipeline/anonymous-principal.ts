import type { McpPrincipal } from '../../interfaces/principal.interface';

/**
 * The principal key of a request without an `Authorization` header on a mount with
 * `anonymous: true`. It is reserved: a token its authorizer maps to this key is treated as
 * anonymous too (it reaches public handlers only, and shares the anonymous sessions' binding).
 */
export const MCP_ANONYMOUS_KEY = 'anonymous';

/**
 * The principal of every request without an `Authorization` header on a mount with
 * `anonymous: true`: no scopes, no roles. Its sessions are bound to its key like any other, so
 * the session id is then the only secret of an anonymous session.
 */
export const MCP_ANONYMOUS_PRINCIPAL: McpPrincipal = Object.freeze({
  key: MCP_ANONYMOUS_KEY,
  label: MCP_ANONYMOUS_KEY,
  raw: null,
  scopes: Object.freeze([]),
  roles: Object.freeze([]),
});

/** True when `principal` is the anonymous one (its key is `MCP_ANONYMOUS_KEY`). */
export function isMcpAnonymous(principal: McpPrincipal | null | undefined): boolean {
  return principal?.key === MCP_ANONYMOUS_KEY;
}
