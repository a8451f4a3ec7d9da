/**
 * The stateless revision (2026-07-28): the `_meta` envelope every request carries, its reserved
 * keys, the routing headers and the error codes it adds. Pure TypeScript.
 */

/** The stateless revision. */
export const STATELESS_PROTOCOL_VERSION = '2026-07-28';

/** Every stateless revision served, newest first. */
export const STATELESS_PROTOCOL_VERSIONS = [STATELESS_PROTOCOL_VERSION] as const;

/** Reserved `_meta` keys of a stateless request. */
export const StatelessMetaKey = {
  ProtocolVersion: 'io.modelcontextprotocol/protocolVersion',
  ClientInfo: 'io.modelcontextprotocol/clientInfo',
  ClientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  LogLevel: 'io.modelcontextprotocol/logLevel',
  ServerInfo: 'io.modelcontextprotocol/serverInfo',
  SubscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/** HTTP headers that mirror body fields on stateless requests. */
export const StatelessHeader = {
  Method: 'mcp-method',
  Name: 'mcp-name',
} as const;

/** JSON-RPC error codes added by the stateless revision. */
export const StatelessErrorCode = {
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
  const version = (meta as Record<string, unknown>)[StatelessMetaKey.ProtocolVersion];
  return typeof version === 'string' ? version : null;
}

/** `params` fields a client adds when it retries a request after an `input_required` result. */
export const StatelessRetryParam = {
  InputResponses: 'inputResponses',
  RequestState: 'requestState',
} as const;

/** True when `version` is a stateless revision this package serves. */
export function isStatelessVersion(version: unknown): version is string {
  return typeof version === 'string' && (STATELESS_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}

const BASE64_SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;
const HEADER_SAFE = /^[\x20-\x7e\t]*$/;

/**
 * Decodes a header value that may use the Base64 sentinel form (`=?base64?...?=`), after
 * trimming optional whitespace. Null when the value is malformed: bad or unpadded Base64, invalid UTF-8, or
 * characters a header value may not carry.
 */
export function decodeHeaderValue(raw: string): string | null {
  const value = raw.trim();
  if (!HEADER_SAFE.test(value)) return null;
  const sentinel = BASE64_SENTINEL.exec(value);
  if (!sentinel) return value.startsWith('=?base64?') && value.endsWith('?=') ? null : value;
  if (sentinel[1].length % 4 !== 0) return null; // unpadded or truncated Base64
  const bytes = Buffer.from(sentinel[1], 'base64');
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  return Buffer.from(text, 'utf8').equals(bytes) ? text : null;
}
