import { McpTransportError } from '../../../errors/mcp-client.errors';

/**
 * The server answered 404 for a session it no longer knows, and the message is one that
 * `HttpTransport` never re-sends on its own (`tools/call` and other non-idempotent requests).
 * The server refused it, so `delivered` is false: the caller may drop the stored session and
 * deliver again with `sessionId: null`, which opens a new one.
 */
export class HttpSessionExpiredError extends McpTransportError {
  constructor(
    server: string,
    method: string,
    /** The session id the server no longer knows. */
    readonly expiredSessionId: string,
  ) {
    super(
      `The session with MCP server "${server}" expired (HTTP 404 for its session id); the "${method}" request was not processed ` +
        'and was not re-sent automatically. Start a new session (sessionId null) and deliver it again if that is safe.',
      false,
      404,
    );
  }
}
