import { McpRpcError } from '../errors/mcp-rpc.errors';
import { InputRequiredSignal } from '../server/stateless/input-channel';
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

/**
 * The relay of one gateway call. When the caller's answer cannot come within this request (a
 * 2026-07-28 caller: the mount ends the `tools/call` with `input_required` and replays the tool
 * with the answers), the upstream call is aborted at once and `rethrowStop` rethrows what ended
 * the round, so that the mount answers `input_required` without waiting for the upstream.
 */
export class UpstreamCallRelay {
  /** Pass as the upstream call's `onServerRequest`. */
  readonly answer: McpCallServerRequestHandler;
  private readonly stop = new AbortController();
  private stopped: { error: unknown } | null = null;

  constructor(private readonly context: McpToolContext) {
    const relay = relayToCaller(context);
    this.answer = async (request, options) => {
      try {
        return await relay(request, options);
      } catch (error) {
        if (error instanceof InputRequiredSignal && this.stopped === null) {
          this.stopped = { error };
          this.stop.abort(error);
        }
        throw error;
      }
    };
  }

  /** The upstream call's signal: the caller's, or this relay's stop. */
  get signal(): AbortSignal {
    return AbortSignal.any([this.context.signal, this.stop.signal]);
  }

  /** Rethrows what stopped the call (an `input_required` round), if anything did. */
  rethrowStop(): void {
    if (this.stopped !== null) throw this.stopped.error;
  }
}
