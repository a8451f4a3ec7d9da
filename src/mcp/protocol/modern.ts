/**
 * The stateless revision (2026-07-28): the `_meta` envelope every request carries, its reserved
 * keys, the routing headers and the error codes it adds. Pure TypeScript.
 */

/** The stateless revision. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Every stateless revision served, newest first. */
export const MODERN_PROTOCOL_VERSIONS = [MODERN_PROTOCOL_VERSION] as const;

/** Reserved `_meta` keys of a modern request. */
export const ModernMetaKey = {
  ProtocolVersion: 'io.modelcontextprotocol/protocolVersion',
  ClientInfo: 'io.modelcontextprotocol/clientInfo',
  ClientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  LogLevel: 'io.modelcontextprotocol/logLevel',
  ServerInfo: 'io.modelcontextprotocol/serverInfo',
  SubscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/** HTTP headers that mirror body fields on modern requests. */
export const ModernHeader = {
  Method: 'mcp-method',
  Name: 'mcp-name',
} as const;

/** JSON-RPC error codes added by the stateless revision. */
export const ModernErrorCode = {
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;

/** The result types of the stateless revision. */
export const ResultType = {
  Complete: 'complete',
  InputRequired: 'input_required',
} as const;

/**
 * The protocol version a request's `_meta` envelope names, or null when the request carries no
 * envelope (it then takes the session path).
 */
export function envelopeVersionOf(params: Record<string, unknown> | undefined): string | null {
  const meta = params?._meta;
  if (!meta || typeof meta !== 'object' || Array.isArray(meta)) return null;
  const version = (meta as Record<string, unknown>)[ModernMetaKey.ProtocolVersion];
  return typeof version === 'string' ? version : null;
}
