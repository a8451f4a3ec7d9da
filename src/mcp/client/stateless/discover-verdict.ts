import { McpProtocolError, McpTransportError } from '../../errors/mcp-client.errors';
import type { JsonRpcResponse } from '../../protocol/jsonrpc';
import { StatelessErrorCode, StatelessMetaKey, STATELESS_PROTOCOL_VERSION } from '../../protocol/stateless';
import { SESSION_PROTOCOL_VERSIONS } from '../../protocol/revisions';

/** What a server turned out to speak. */
export type McpEraVerdict =
  /** A 2026-07-28 server, with what its `server/discover` told (when it answered one). */
  | {
      era: 'stateless';
      version: string;
      serverInfo: Record<string, unknown> | null;
      capabilities: Record<string, unknown> | null;
    }
  /** A 2025-era server: use the `initialize` handshake (asking for `version` when known). */
  | { era: 'legacy'; reason: string; version?: string };

/** Stateless error codes: a server that answers with one of them speaks the stateless revision. */
const STATELESS_ERRORS = new Set<number>(Object.values(StatelessErrorCode));

/** HTTP statuses that are about the request (not about credentials or load): a legacy endpoint refusing a stateless request. */
const LEGACY_STATUSES = new Set([400, 404, 405, 406, 415, 422]);

function record(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * Reads the answer to a `server/discover` probe. Only a result listing 2026-07-28 among its
 * `supportedVersions`, or a recognized stateless error, proves a stateless server; anything else
 * (a -32601, another JSON-RPC error, a result of another shape) means 2025 era.
 * @throws McpProtocolError when the server is stateless but names no revision this client speaks.
 */
export function verdictFromAnswer(server: string, response: JsonRpcResponse | null): McpEraVerdict {
  if (!response) return { era: 'legacy', reason: 'the probe got no JSON-RPC answer' };
  if ('error' in response) {
    const { code, message, data } = response.error;
    if (code === StatelessErrorCode.UnsupportedProtocolVersion) {
      const supported = strings(record(data)?.supported);
      if (supported.includes(STATELESS_PROTOCOL_VERSION))
        return { era: 'stateless', version: STATELESS_PROTOCOL_VERSION, serverInfo: null, capabilities: null };
      const session = SESSION_PROTOCOL_VERSIONS.find((v) => supported.includes(v));
      if (session) return { era: 'legacy', reason: `the server supports ${supported.join(', ')}`, version: session };
      throw new McpProtocolError(
        `MCP server "${server}" supports only protocol revisions ${JSON.stringify(supported)}, none of which this client speaks`,
        false,
      );
    }
    if (STATELESS_ERRORS.has(code))
      return { era: 'stateless', version: STATELESS_PROTOCOL_VERSION, serverInfo: null, capabilities: null };
    return { era: 'legacy', reason: `server/discover was answered with error ${code}: ${message}` };
  }
  const result = response.result;
  if (!strings(result.supportedVersions).includes(STATELESS_PROTOCOL_VERSION)) {
    return {
      era: 'legacy',
      reason: `server/discover did not list ${STATELESS_PROTOCOL_VERSION} among its supportedVersions`,
    };
  }
  return {
    era: 'stateless',
    version: STATELESS_PROTOCOL_VERSION,
    serverInfo: record(record(result._meta)?.[StatelessMetaKey.ServerInfo]),
    capabilities: record(result.capabilities),
  };
}

/**
 * Reads a probe that failed before a JSON-RPC answer arrived. An HTTP 4xx refusal without a
 * stateless error body, or an answer that is not JSON-RPC, means 2025 era. Anything else (connection
 * refused, credentials refused, 5xx, a crashed process) proves nothing: null, and the failure
 * stands.
 */
export function verdictFromFailure(error: unknown): McpEraVerdict | null {
  if (error instanceof McpTransportError && error.status !== undefined && LEGACY_STATUSES.has(error.status)) {
    return { era: 'legacy', reason: `server/discover was refused with HTTP ${error.status}` };
  }
  if (error instanceof McpProtocolError)
    return { era: 'legacy', reason: `server/discover got no usable answer: ${error.message}` };
  return null;
}
