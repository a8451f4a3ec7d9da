import { McpInfrastructureError } from './mcp-infrastructure.errors';

/**
 * The database refused one `mcp_events` row even on its own (retried outside its group commit).
 * The exchange it records is not answered with a result: the endpoint answers 503 with a JSON-RPC
 * error, and a client call rejects with this error. The message names the row and the method,
 * never the payload.
 */
export class McpEventRejectedError extends McpInfrastructureError {
  constructor(
    /** Id of the refused row. */
    readonly eventId: string,
    /** The row's JSON-RPC method (as it would have been stored), or null. */
    readonly method: string | null,
    /** What the database said, cut to a few hundred characters. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(
      `The database refused mcp_events row ${eventId}${method === null ? '' : ` (method ${JSON.stringify(method)})`}: ${reason}`,
      options,
    );
    this.name = 'McpEventRejectedError';
  }
}
