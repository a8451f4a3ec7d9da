import type { JsonRpcErrorObject } from '../protocol/jsonrpc';

/** Base class of the errors a caller of `McpClientService` or a transport must handle. */
export abstract class McpClientError extends Error {
  constructor(
    message: string,
    /**
     * Whether the message may have reached the server. A `tools/call` that may have been
     * delivered is never re-sent (at most once); one that provably was not may be retried.
     */
    readonly delivered: boolean,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The call did not complete within its timeout (spawn and handshake included). */
export class McpTimeoutError extends McpClientError {
  constructor(
    message: string,
    delivered: boolean,
    /** The deadline that passed, in milliseconds. */
    readonly timeoutMs: number,
  ) {
    super(message, delivered);
  }
}

/** The transport failed: spawn failed, connection refused, the process crashed or exited, HTTP 5xx. */
export class McpTransportError extends McpClientError {
  constructor(
    message: string,
    delivered: boolean,
    /** The HTTP status of the failed answer, when there was one. */
    readonly status?: number,
  ) {
    super(message, delivered);
  }
}

/** The peer broke the protocol: an unparsable answer, a failed handshake, a wrong revision. */
export class McpProtocolError extends McpClientError {}

/** The server answered with a JSON-RPC error. */
export class McpServerError extends McpClientError {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** The JSON-RPC error `data`, if any. */
  readonly data?: unknown;

  constructor(
    /** The JSON-RPC error object the server answered. */
    readonly error: JsonRpcErrorObject,
  ) {
    super(`MCP server error ${error.code}: ${error.message}`, true);
    this.code = error.code;
    this.data = error.data;
  }
}
