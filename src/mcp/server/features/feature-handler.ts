import { McpRpcError } from '../../errors/mcp-rpc.errors';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import { JsonRpcErrorCode, type JsonRpcRequest } from '../../protocol/jsonrpc';
import { isPropagated } from '../dispatch/handler-errors';
import type { Toolset } from '../dispatch/toolset';
import { errorText } from '../tools/tool-result-mapper';

/**
 * Runs a resource, prompt or completion handler as the handling of `request` (cancellation and
 * `ctx.*` work as for tools). Its failures become JSON-RPC errors: an `McpRpcError` keeps its
 * code, anything else is -32603 with the error's message; infrastructure failures (and the
 * other classes registered with `propagateFromHandlers`, e.g. an `input_required` round trip)
 * propagate.
 */
export function runFeatureHandler<T>(
  toolset: Toolset,
  request: JsonRpcRequest,
  context: McpDeliveryContext,
  work: (handlerContext: McpToolContext) => Promise<T>,
): Promise<T> {
  return toolset.runCancellable(request, context, async (handlerContext) => {
    try {
      return await work(handlerContext);
    } catch (error) {
      if (isPropagated(error)) throw error;
      throw new McpRpcError(JsonRpcErrorCode.InternalError, errorText(error));
    }
  });
}

/** An invalid-params error (-32602). */
export function invalidParams(message: string, data?: unknown): McpRpcError {
  return new McpRpcError(JsonRpcErrorCode.InvalidParams, message, data);
}

/** Reads a required string parameter, or throws -32602 naming it. */
export function requireStringParam(request: JsonRpcRequest, name: string): string {
  const value = request.params?.[name];
  if (typeof value !== 'string') throw invalidParams(`Invalid params: ${request.method} needs a string "${name}"`);
  return value;
}
