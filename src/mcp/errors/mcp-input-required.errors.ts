import { McpClientError } from './mcp-client.errors';

/**
 * A 2026-07-28 server kept answering `input_required` and the call could not be completed: more
 * rounds than `maxInputRounds`, a request for input no registered handler serves, or a handler
 * that failed. The server has seen the request (`delivered` is true), so it is not sent again.
 */
export class McpInputRequiredError extends McpClientError {
  constructor(
    message: string,
    /** Name of the configured server. */
    readonly server: string,
    /** The request that asked for input, e.g. `tools/call`. */
    readonly method: string,
  ) {
    super(message, true);
  }
}
