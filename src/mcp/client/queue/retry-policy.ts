import { McpClientError, McpTimeoutError, McpTransportError } from '../../errors/mcp-client.errors';
import { methodFacts } from '../../protocol/method-catalog';
import { McpAuthorizationRequiredError } from '../auth/oauth-client.errors';

/**
 * Whether a failed call may run again: a method the catalog does not call idempotent
 * (`tools/call` first of all) only when it provably never reached the server; idempotent methods
 * also after a transport failure or a timeout. JSON-RPC errors, capability refusals and
 * interrupted calls are final. A method MCP does not define is the caller's own request and
 * counts as idempotent, as it always did. A call that needs the user to authorize first
 * (`McpAuthorizationRequiredError`, as a transport error's cause) never runs again by itself.
 */
export function isRetryable(method: string, error: unknown): boolean {
  if (McpAuthorizationRequiredError.of(error)) return false;
  const idempotent = methodFacts(method)?.idempotent ?? true;
  if (error instanceof McpTransportError || error instanceof McpTimeoutError) return idempotent || !error.delivered;
  if (error instanceof McpClientError) return false;
  return idempotent;
}

/** Delay before attempt `attempt + 1` (exponential, starting at `backoffMs`). */
export function backoffDelay(backoffMs: number, attempt: number): number {
  return backoffMs * 2 ** Math.max(0, attempt - 1);
}

/**
 * Whether a retry after `delayMs` would start before the call's absolute deadline. The deadline
 * is the caller's (`McpCallJob.deadlineAt`): a retry that could only start after it is not
 * made, so the caller gets the failure now instead of after a wait that cannot succeed.
 */
export function retryStartsInTime(job: { deadlineAt?: number }, delayMs: number): boolean {
  return job.deadlineAt === undefined || Date.now() + delayMs < job.deadlineAt;
}
