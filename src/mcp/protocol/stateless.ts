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

/** Methods the stateless revision adds. */
export const StatelessMethod = {
  Discover: 'server/discover',
  SubscriptionsListen: 'subscriptions/listen',
} as const;

/** Notifications the stateless revision adds. */
export const StatelessNotification = {
  SubscriptionsAcknowledged: 'notifications/subscriptions/acknowledged',
} as const;

/** `params` fields a client adds when it retries a request after an `input_required` result. */
export const StatelessRetryParam = {
  InputResponses: 'inputResponses',
  RequestState: 'requestState',
} as const;

/**
 * Session-era methods that do not exist on the stateless revision: a stateless request naming
 * one gets "method not found", like any unknown method.
 */
export const REMOVED_STATELESS_METHODS: readonly string[] = [
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
];

/** The only requests that may answer with an `input_required` result. */
export const INPUT_REQUIRED_METHODS: readonly string[] = ['tools/call', 'prompts/get', 'resources/read'];

/** Requests whose complete results carry caching hints (`ttlMs`, `cacheScope`). */
export const CACHEABLE_METHODS: readonly string[] = [
  'server/discover',
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
];

/** The `params` field the `Mcp-Name` header mirrors, per method that requires the header. */
export const MCP_NAME_SOURCE: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

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
