import type { JsonRpcMessage, JsonRpcNotification, JsonRpcResponse } from '../protocol/jsonrpc';
import type { McpLogLevel } from '../protocol/log-levels';
import type { McpPrincipal } from './principal.interface';
import type { McpInputRequestOptions, McpRoundState, McpTaskContext } from './mcp-tool-context.interface';

/**
 * The way back to the client while a request is being handled: requests the server makes of the
 * client (elicitation, sampling, roots). On a 2025 session they travel on the POST's SSE stream;
 * on 2026-07-28 they become an `input_required` result. The handler never knows which.
 */
export interface McpClientChannel {
  /**
   * Sends a request to the client and resolves with its result (or rejects with its error).
   * `options.key` names the request where the carrier keys requests (2026-07-28 input requests).
   */
  request(
    method: string,
    params: Record<string, unknown>,
    options?: McpInputRequestOptions,
  ): Promise<Record<string, unknown>>;
  /**
   * The answers the channel has handed to the handler so far, by key: those of a 2026-07-28
   * round, which a task created by `ctx.startTask()` replays to its handler. Absent on carriers
   * that do not key requests.
   */
  consumedAnswers?(): Record<string, Record<string, unknown>>;
  /**
   * The values kept in the sealed `requestState` of a 2026-07-28 round (`McpToolContext.round`):
   * what the last round kept, and what this one keeps for the next. Absent on other carriers.
   */
  round?: McpRoundState;
}

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
  /** The client's declared capabilities, when known (decides what the server may ask of it). */
  clientCapabilities?: Record<string, unknown> | null;
  /** Least severe level of `notifications/message` the client wants; none is sent when absent. */
  logLevel?: McpLogLevel | null;
  /**
   * Sends a notification related to the request being handled (progress, log messages). Absent
   * when the carrier has no way to send one (a plain JSON answer): the notification is dropped.
   */
  notify?: (notification: JsonRpcNotification) => void | Promise<void>;
  /** Requests to the client; absent when the carrier cannot make any. */
  client?: McpClientChannel;
  /** The task the request runs as (a worker running a task-augmented `tools/call`). */
  task?: McpTaskContext;
  /**
   * Set while a tool with `inputBeforeTask` runs before its task exists: `ctx.startTask()` calls
   * it, and it stops the handler so that the toolset creates the task.
   */
  beginTask?: () => never;
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
