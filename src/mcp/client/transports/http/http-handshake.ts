import { randomUUID } from 'node:crypto';
import { McpProtocolError } from '../../../errors/mcp-client.errors';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../../protocol/jsonrpc';
import { McpMethod } from '../../../protocol/mcp-methods';
import { isSupportedSessionVersion } from '../../../protocol/revisions';
import type { McpHandshakeInfo } from '../mcp-transport.interface';
import type { HttpSession } from './http-wire';

function record(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** The initialize request `HttpTransport` sends when it opens a session itself. */
export function initializeRequest(options: {
  protocolVersion: string;
  capabilities: Record<string, unknown>;
  clientInfo: Record<string, unknown>;
}): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id: `durable-mcp-initialize-${randomUUID()}`,
    method: McpMethod.Initialize,
    params: {
      protocolVersion: options.protocolVersion,
      capabilities: options.capabilities,
      clientInfo: options.clientInfo,
    },
  };
}

/** The notification that completes a handshake. */
export const INITIALIZED_NOTIFICATION: JsonRpcNotification = { jsonrpc: '2.0', method: McpMethod.Initialized };

/**
 * Reads what an initialize response tells about the server. Rejects an error response, a
 * missing result, and a revision this package does not speak, with `McpProtocolError`.
 */
export function handshakeFromResponse(server: string, response: JsonRpcResponse): McpHandshakeInfo {
  if ('error' in response) {
    throw new McpProtocolError(
      `MCP server "${server}" refused initialize: ${response.error.code} ${response.error.message}`,
      true,
    );
  }
  const result = response.result;
  const protocolVersion = result.protocolVersion;
  if (!isSupportedSessionVersion(protocolVersion)) {
    throw new McpProtocolError(
      `MCP server "${server}" chose protocol revision ${JSON.stringify(protocolVersion)}, which this client does not speak`,
      true,
    );
  }
  const info: McpHandshakeInfo = {
    protocolVersion,
    serverInfo: record(result.serverInfo),
    capabilities: record(result.capabilities),
  };
  if (typeof result.instructions === 'string') info.instructions = result.instructions;
  return info;
}

/** The session a handshake opened: the `Mcp-Session-Id` header (null for a stateless server). */
export function sessionFromHandshake(sessionId: string | null, handshake: McpHandshakeInfo): HttpSession {
  return { id: sessionId, protocolVersion: handshake.protocolVersion };
}
