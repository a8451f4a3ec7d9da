import type { ExecutionContext } from '@nestjs/common';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';

/** The context type of MCP handlers: `context.getType()` answers it inside guards and interceptors. */
export const MCP_CONTEXT_TYPE = 'mcp';

/** What an MCP handler runs for: a tool, a prompt, a resource or a resource template. */
export type McpHandlerKind = 'tool' | 'prompt' | 'resource' | 'resourceTemplate';

/**
 * What a guard, interceptor or filter learns about the MCP request it runs for
 * (`getMcpContext(context)`). Guards also run when a list is built (`phase: 'list'`): a guard that
 * refuses there hides the handler from that principal's list; such a context has no arguments and
 * no handler context.
 */
export interface McpExecutionInfo {
  /** `'call'` for a request that runs the handler; `'list'` when deciding what a list shows. */
  phase: 'call' | 'list';
  /** The MCP method: `tools/call`, `tools/list`, `prompts/get`, `resources/read`... */
  method: string;
  /** What kind of handler this is. */
  kind: McpHandlerKind;
  /** The tool or prompt name, or the resource URI (template) it is published under. */
  name: string;
  /** The caller. */
  principal: McpPrincipal;
  /** The session, or null (stateless or in-process delivery). */
  sessionId: string | null;
  /** The protocol revision of the request. */
  protocolVersion: string;
  /** The validated arguments (a call only; pipes see and may replace them). */
  arguments?: unknown;
  /** The context the handler receives (a call only). */
  handlerContext?: McpToolContext;
}

/**
 * The MCP side of a Nest `ExecutionContext`, or null when the context is not an MCP one (an HTTP
 * request, a GraphQL resolver...). Use it in guards and interceptors shared with controllers.
 *
 * @example
 * ```ts
 * canActivate(context: ExecutionContext) {
 *   const mcp = getMcpContext(context);
 *   return !mcp || mcp.principal.roles?.includes('admin') === true;
 * }
 * ```
 */
export function getMcpContext(context: ExecutionContext): McpExecutionInfo | null {
  if (context.getType<string>() !== MCP_CONTEXT_TYPE) return null;
  return context.getArgByIndex<McpExecutionInfo | undefined>(2) ?? null;
}

/**
 * @internal
 * What the guards of one handler are told about a call or a list (`phase`), from the caller's
 * delivery context; a call adds its arguments and handler context.
 */
export function executionInfoOf(
  phase: McpExecutionInfo['phase'],
  method: string,
  kind: McpHandlerKind,
  name: string,
  context: Pick<McpDeliveryContext, 'principal' | 'sessionId' | 'protocolVersion'>,
): McpExecutionInfo {
  return {
    phase,
    method,
    kind,
    name,
    principal: context.principal,
    sessionId: context.sessionId,
    protocolVersion: context.protocolVersion,
  };
}
