import { McpRpcError } from '../errors/mcp-rpc.errors';
import type { McpCallServerRequestHandler } from '../client/interfaces/mcp-call.interface';
import type { McpToolContext, McpUrlElicitation } from '../interfaces/mcp-tool-context.interface';
import { JsonRpcErrorCode } from '../protocol/jsonrpc';
import { McpMethod } from '../protocol/mcp-methods';
import { StatelessErrorCode } from '../protocol/stateless';

/**
 * Answers the requests an upstream sends during a gateway call with the downstream caller's
 * client, through the tool's context: `elicitation/create` (form and URL mode),
 * `sampling/createMessage` and `roots/list`. The downstream answer goes back to the upstream as
 * it came; a downstream client without the capability makes it -32601 (what that client would
 * have answered itself), and any other downstream error keeps its code. Other methods get -32601.
 */
export function relayToCaller(context: McpToolContext): McpCallServerRequestHandler {
  return async ({ method, params }) => {
    try {
      if (method === McpMethod.ElicitationCreate) return { ...(await elicit(context, params)) };
      if (method === McpMethod.SamplingCreateMessage) return await context.sample(params);
      if (method === McpMethod.RootsList) return { roots: await context.listRoots() };
    } catch (error) {
      if (error instanceof McpRpcError && error.code === StatelessErrorCode.MissingRequiredClientCapability)
        throw new McpRpcError(JsonRpcErrorCode.MethodNotFound, `Method not found: ${method}`);
      throw error;
    }
    throw new McpRpcError(JsonRpcErrorCode.MethodNotFound, `Method not found: ${method}`);
  };
}

function elicit(context: McpToolContext, params: Record<string, unknown>): Promise<object> {
  if (params.mode === 'url') return context.elicit(params as unknown as McpUrlElicitation);
  const { message, requestedSchema, mode: _mode, ...extra } = params;
  return context.elicit(
    typeof message === 'string' ? message : '',
    requestedSchema && typeof requestedSchema === 'object' ? (requestedSchema as Record<string, unknown>) : {},
    extra,
  );
}

/**
 * Answers a request an upstream sends while the gateway lists its tools, prompts or resources:
 * no caller is there to ask, so -32601. Passing it to a listing makes the client announce the
 * capabilities the gateway relays during calls.
 */
export const refuseWhileListing: McpCallServerRequestHandler = ({ method }) =>
  Promise.reject(
    new McpRpcError(JsonRpcErrorCode.MethodNotFound, `Method not found: ${method} (no caller while the gateway lists)`),
  );
