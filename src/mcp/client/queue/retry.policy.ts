import { McpClientError, McpTimeoutError, McpTransportError } from '../../errors/mcp-client.errors';
import { McpMethod } from '../../protocol/mcp.methods';

/**
 * Whether a failed call may run again (DESIGN section 5): a `tools/call` only when it provably
 * never reached the server; listing and reading methods also after a transport failure or a
 * timeout. JSON-RPC errors, capability refusals and interrupted calls are final.
 */
export function isRetryable(method: string, error: unknown): boolean {
  const isCall = method === McpMethod.ToolsCall;
  if (error instanceof McpTransportError || error instanceof McpTimeoutError) return !isCall || !error.delivered;
  if (error instanceof McpClientError) return false;
  return !isCall;
}

/** Delay before attempt `attempt + 1` (exponential, starting at `backoffMs`). */
export function backoffDelay(backoffMs: number, attempt: number): number {
  return backoffMs * 2 ** Math.max(0, attempt - 1);
}
