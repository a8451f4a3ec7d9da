import { McpClientError } from '../errors/mcp-client.errors';

/**
 * The caller aborted the call with the `signal` of its `McpCallOptions`. `delivered` tells whether
 * the request may have reached the server: false when the call was still queued (the job was
 * removed, or its worker saw the abort before sending), true when it was sent and the client then
 * told the server to stop (`notifications/cancelled`, or, on the stateless revision over HTTP,
 * closing the request's response stream). An aborted call is never retried.
 */
export class McpCallAbortedError extends McpClientError {
  constructor(
    /** Name of the configured server. */
    readonly server: string,
    /** The JSON-RPC method of the call, e.g. `tools/call`. */
    readonly method: string,
    /** Whether the request may have reached the server (see `McpClientError.delivered`). */
    delivered: boolean,
    /** The abort reason, as text, when the signal carried one. */
    readonly reason?: string,
  ) {
    super(
      delivered
        ? `The call of ${method} on MCP server "${server}" was aborted by the caller after it was sent; the server was asked to cancel it${reason ? ` (${reason})` : ''}.`
        : `The call of ${method} on MCP server "${server}" was aborted by the caller before it was sent${reason ? ` (${reason})` : ''}.`,
      delivered,
    );
  }
}

/** The text of an abort reason: a string, an `Error`'s message, or nothing for the default `AbortError`. */
export function abortReasonText(reason: unknown): string | undefined {
  if (typeof reason === 'string') return reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason.message;
  return undefined;
}
