import type { JsonRpcErrorObject } from '../protocol/jsonrpc';

/**
 * A failure that the server answers with a JSON-RPC error response (unknown tool, invalid
 * params, ...). Throw it from a tool handler to answer with a JSON-RPC error instead of an
 * `isError` result.
 */
export class McpRpcError extends Error {
  constructor(
    /** The JSON-RPC error code. */
    readonly code: number,
    message: string,
    /** Optional `data` of the JSON-RPC error. */
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'McpRpcError';
  }

  /** The JSON-RPC error object to send. */
  toJsonRpc(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}
