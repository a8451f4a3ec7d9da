import type { McpPrincipal } from '../../interfaces/principal.interface';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import type { JsonRpcResponse } from '../../protocol/jsonrpc';

const AUDIT_NOTE = Symbol('mcpAuditNote');

/**
 * A JSON-RPC error answered for a refused request, with a note for the audit trail (which guard
 * refused) that the caller never sees.
 */
export class McpRefusedError extends McpRpcError {
  /** @internal */
  constructor(
    code: number,
    message: string,
    readonly auditNote: string,
    data?: unknown,
  ) {
    super(code, message, data);
  }
}

/** @internal Attaches the audit note to a response without putting it on the wire. */
export function withAuditNote<T extends object>(response: T, note: string): T {
  Object.defineProperty(response, AUDIT_NOTE, { value: note, enumerable: false });
  return response;
}

/** @internal The audit note a toolset attached to a response (e.g. the guard that refused), or null. */
export function auditNoteOf(response: JsonRpcResponse | Record<string, unknown> | null | undefined): string | null {
  return (response as unknown as Record<symbol, string> | null | undefined)?.[AUDIT_NOTE] ?? null;
}

/** True when the principal holds one of `roles` (or `roles` is empty). */
export function hasSomeRole(roles: readonly string[] | undefined, principal: McpPrincipal): boolean {
  if (!roles?.length) return true;
  const held = principal.roles ?? [];
  return roles.some((role) => held.includes(role));
}

/** The audit note of a refusal. */
export function refusalNote(what: string, guard: string, error?: unknown): string {
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a guard may throw anything; String() is the fallback for one without a message
  const reason = error === undefined ? '' : `: ${(error as Error)?.message ?? String(error)}`;
  return `Refused ${what} by ${guard}${reason}`;
}
