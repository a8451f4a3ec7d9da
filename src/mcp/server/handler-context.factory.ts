import type { McpDeliveryContext, McpLogLevel } from '../interfaces/mcp-delivery.interface';
import type { McpElicitResult, McpRoot, McpToolContext } from '../interfaces/mcp-tool-context.interface';
import { McpRpcError } from '../errors/mcp-rpc.error';
import type { JsonRpcRequest } from '../protocol/jsonrpc';

const LEVELS: McpLogLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** JSON-RPC code for "the client did not declare the capability this needs" (2026-07-28). */
export const MISSING_CLIENT_CAPABILITY_CODE = -32021;

/** True when `level` is at least as severe as `minimum`. */
export function isLogLevelEnabled(level: McpLogLevel, minimum: McpLogLevel | null | undefined): boolean {
  return !!minimum && LEVELS.indexOf(level) >= LEVELS.indexOf(minimum);
}

/** True when `value` is an MCP log level. */
export function isLogLevel(value: unknown): value is McpLogLevel {
  return typeof value === 'string' && (LEVELS as string[]).includes(value);
}

function requireCapability(context: McpDeliveryContext, capability: string, method: string): void {
  if (!context.client) {
    throw new McpRpcError(MISSING_CLIENT_CAPABILITY_CODE, `Cannot send ${method}: this request has no channel back to the client`);
  }
  if (!context.clientCapabilities || !(capability in context.clientCapabilities)) {
    throw new McpRpcError(MISSING_CLIENT_CAPABILITY_CODE, `The client did not declare the "${capability}" capability that ${method} needs`, {
      requiredCapabilities: { [capability]: {} },
    });
  }
}

/**
 * Builds the context a handler receives for one request: identity, cancellation, and the
 * revision-independent way back to the client (log, progress, elicit, sample, listRoots).
 */
export function createHandlerContext(mount: string, request: JsonRpcRequest, context: McpDeliveryContext, signal: AbortSignal): McpToolContext {
  const meta = request.params?._meta as Record<string, unknown> | undefined;
  const progressToken = meta?.progressToken;
  const notify = async (method: string, params: Record<string, unknown>) => {
    if (context.notify && !signal.aborted) await context.notify({ jsonrpc: '2.0', method, params });
  };
  const ask = async (capability: string, method: string, params: Record<string, unknown>) => {
    requireCapability(context, capability, method);
    return (context.client as NonNullable<McpDeliveryContext['client']>).request(method, params);
  };
  return {
    principal: context.principal,
    sessionId: context.sessionId,
    mount,
    protocolVersion: context.protocolVersion,
    requestId: request.id,
    signal,
    meta,
    async log(level, data, logger) {
      if (isLogLevelEnabled(level, context.logLevel)) await notify('notifications/message', logger ? { level, logger, data } : { level, data });
    },
    async progress(progress, total, message) {
      if (typeof progressToken !== 'string' && typeof progressToken !== 'number') return;
      await notify('notifications/progress', { progressToken, progress, ...(total !== undefined ? { total } : {}), ...(message ? { message } : {}) });
    },
    async elicit(message, requestedSchema, extra) {
      return (await ask('elicitation', 'elicitation/create', { mode: 'form', message, requestedSchema, ...extra })) as McpElicitResult;
    },
    async sample(params) {
      return ask('sampling', 'sampling/createMessage', params);
    },
    async listRoots() {
      const result = await ask('roots', 'roots/list', {});
      return (Array.isArray(result.roots) ? result.roots : []) as McpRoot[];
    },
  };
}
