import type { JsonRpcNotification, JsonRpcRequest } from '../../protocol/jsonrpc';
import { McpHeader } from '../../protocol/mcp-methods';
import { methodFacts } from '../../protocol/method-catalog';
import { StatelessHeader, StatelessMetaKey } from '../../protocol/stateless';

/** What every stateless request declares about the client in its `_meta` envelope. */
export interface StatelessEnvelope {
  /** The revision the request is written in, e.g. `2026-07-28`. */
  protocolVersion: string;
  /** Name and version of this client. */
  clientInfo: Record<string, unknown>;
  /** The capabilities the registered server->client handlers can serve. */
  clientCapabilities: Record<string, unknown>;
  /** The least severe log level the server should send, when the caller set one. */
  logLevel?: string;
}

/** The sentinel that marks a Base64-encoded header value. */
const SENTINEL = /^=\?base64\?.*\?=$/s;

/**
 * Returns `params` with the envelope merged into its `_meta`: the caller's own `_meta` keys stay,
 * the reserved keys are ours. Other params (including `requestState`) are passed through as they
 * are, never re-encoded.
 */
export function withEnvelope(
  params: Record<string, unknown> | undefined,
  envelope: StatelessEnvelope,
): Record<string, unknown> {
  const callerMeta =
    params?._meta && typeof params._meta === 'object' && !Array.isArray(params._meta)
      ? (params._meta as Record<string, unknown>)
      : {};
  const meta: Record<string, unknown> = {
    ...callerMeta,
    [StatelessMetaKey.ProtocolVersion]: envelope.protocolVersion,
    [StatelessMetaKey.ClientInfo]: envelope.clientInfo,
    [StatelessMetaKey.ClientCapabilities]: envelope.clientCapabilities,
  };
  if (envelope.logLevel) meta[StatelessMetaKey.LogLevel] = envelope.logLevel;
  return { ...(params ?? {}), _meta: meta };
}

/**
 * A header value as the Streamable HTTP transport requires it: as-is when it is plain visible
 * ASCII without surrounding whitespace, else `=?base64?<UTF-8 as Base64>?=` (also for a plain
 * value that looks like the sentinel, so it cannot be misread).
 */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x20-\x7e\t]*$/.test(value) && value.trim() === value && !SENTINEL.test(value);
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/**
 * The routing headers of a stateless request: `MCP-Protocol-Version`, `Mcp-Method` and, for the
 * methods the catalog names a source for (`tools/call`, `prompts/get`, `resources/read`), `Mcp-Name`.
 */
export function routingHeaders(
  message: JsonRpcRequest | JsonRpcNotification,
  protocolVersion: string,
): Record<string, string> {
  const headers: Record<string, string> = {
    [McpHeader.ProtocolVersion]: protocolVersion,
    [StatelessHeader.Method]: message.method,
  };
  const source = methodFacts(message.method)?.nameSource;
  const target = source ? message.params?.[source] : undefined;
  if (typeof target === 'string') headers[StatelessHeader.Name] = encodeHeaderValue(target);
  return headers;
}
