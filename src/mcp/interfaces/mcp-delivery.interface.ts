import type { JsonRpcMessage, JsonRpcResponse } from '../protocol/jsonrpc';
import type { McpPrincipal } from './principal.interface';

/** Everything a toolset needs to know about who sent a message and on which session. */
export interface McpDeliveryContext {
  /** The authenticated caller. */
  principal: McpPrincipal;
  /** The session the message belongs to, or null (in-process or stateless delivery). */
  sessionId: string | null;
  /** The protocol revision the message speaks. */
  protocolVersion: string;
  /** Aborts the work started by the message (e.g. the HTTP client went away). */
  signal?: AbortSignal;
}

/**
 * The single path of a JSON-RPC message into a mount's tools. The HTTP controller and the
 * in-process client transport both use it, so local and remote behaviour cannot drift.
 */
export interface McpMessageHandler {
  /**
   * Handles one message. Resolves to the JSON-RPC response for a request, or null for a
   * notification or a client response. Rejects only on failures that are not the tool's
   * (a bug, a database outage): callers must surface those as errors, never as a result.
   */
  deliver(message: JsonRpcMessage, context: McpDeliveryContext): Promise<JsonRpcResponse | null>;
}
