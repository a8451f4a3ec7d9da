import { MCP_RAW_BODY, type McpRequest } from '../http/mcp-body-reader';
import type { JsonRpcId } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';

/** What the bearer guard needs of a POST's JSON-RPC message before the endpoint reads it. */
export interface PeekedRequest {
  /** The request id, for the JSON-RPC body of a refusal (null for a notification or no id). */
  id: JsonRpcId | null;
  /** The tool of a `tools/call`. */
  tool?: string;
}

/**
 * Parses a POST's body (already read by the module's body reader) for its id and, for
 * `tools/call`, its tool name; undefined for other methods or a body that does not parse (the
 * endpoint answers that one itself). The guard only peeks on mounts with scoped tools, for the
 * anonymous principal and on refusals, so other requests never parse a body twice.
 */
export function peekRequest(req: McpRequest): PeekedRequest | undefined {
  if (req.method !== 'POST') return undefined;
  const raw = req[MCP_RAW_BODY];
  let body: unknown = req.body;
  if (raw) {
    if (!raw.ok) return undefined;
    try {
      body = JSON.parse(raw.text);
    } catch {
      return undefined;
    }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { id, method, params } = body as { id?: unknown; method?: unknown; params?: { name?: unknown } };
  const requestId = typeof id === 'string' || typeof id === 'number' ? id : null;
  const tool = method === McpMethod.ToolsCall && typeof params?.name === 'string' ? params.name : undefined;
  return { id: requestId, tool };
}
