import type { JsonRpcRequest, JsonRpcResponse } from '../../../protocol/jsonrpc';
import { McpMethod } from '../../../protocol/mcp-methods';
import { isSupportedSessionVersion, LATEST_SESSION_PROTOCOL_VERSION } from '../../../protocol/revisions';
import type { McpHandshakeInfo } from '../mcp-transport.interface';

/** The capabilities declared when the context can answer server->client requests. */
export const STDIO_HANDLER_CAPABILITIES: Readonly<Record<string, unknown>> = Object.freeze({
  roots: {},
  sampling: {},
  elicitation: {},
});

// A string id cannot collide with the numeric ids most callers use; it is awaited alone anyway.
const INITIALIZE_ID = 'durable-mcp:initialize';

/** The `initialize` request the transport sends first. */
export function buildInitializeRequest(
  capabilities: Record<string, unknown>,
  clientInfo: Record<string, unknown>,
  protocolVersion: string = LATEST_SESSION_PROTOCOL_VERSION,
): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id: INITIALIZE_ID,
    method: McpMethod.Initialize,
    params: { protocolVersion, capabilities, clientInfo },
  };
}

/** The notification that ends the handshake. */
export const INITIALIZED_NOTIFICATION = Object.freeze({ jsonrpc: '2.0', method: McpMethod.Initialized });

function objectOrNull(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/**
 * Reads the server's answer to `initialize`. Returns the handshake, or the reason it cannot be
 * used (an error answer, a missing result, a revision this client does not speak).
 */
export function readInitializeResponse(response: JsonRpcResponse): McpHandshakeInfo | { refused: string } {
  if ('error' in response) {
    return { refused: `initialize was answered with error ${response.error.code}: ${response.error.message}` };
  }
  const result = objectOrNull(response.result);
  if (result === null) return { refused: 'initialize was answered without a result object' };
  const version = result.protocolVersion;
  if (!isSupportedSessionVersion(version)) {
    return {
      refused: `the server chose protocol version ${JSON.stringify(version)}, which this client does not speak`,
    };
  }
  const handshake: McpHandshakeInfo = {
    protocolVersion: version,
    serverInfo: objectOrNull(result.serverInfo),
    capabilities: objectOrNull(result.capabilities),
  };
  if (typeof result.instructions === 'string') handshake.instructions = result.instructions;
  return handshake;
}

/** The `notifications/cancelled` sent for a request the client gave up on. */
export function buildCancelledNotification(request: JsonRpcRequest, reason: string): Record<string, unknown> {
  return { jsonrpc: '2.0', method: McpMethod.Cancelled, params: { requestId: request.id, reason } };
}
