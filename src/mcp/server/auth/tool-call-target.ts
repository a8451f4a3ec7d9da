import { MCP_RAW_BODY, type McpRequest } from '../http/mcp-body-reader';
import { McpMethod } from '../../protocol/mcp-methods';

/**
 * The tool a POST calls (`tools/call` and its `params.name`), or undefined for anything else or
 * a body that does not parse (the endpoint answers that one itself). Only read when the mount has
 * scoped tools, so other mounts never parse a body twice.
 */
export function toolCallTarget(req: McpRequest): string | undefined {
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
  if (typeof body !== 'object' || body === null || (body as { method?: unknown }).method !== McpMethod.ToolsCall) return undefined;
  const name = (body as { params?: { name?: unknown } }).params?.name;
  return typeof name === 'string' ? name : undefined;
}
