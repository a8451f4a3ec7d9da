/** The client did not answer a request the server sent it (elicitation, sampling, roots) in time. */
export class McpClientRequestTimeoutError extends Error {
  constructor(
    /** The method of the unanswered request. */
    readonly method: string,
    /** How long the server waited, in milliseconds. */
    readonly timeoutMs: number,
  ) {
    super(`The client did not answer ${method} within ${timeoutMs} ms`);
    this.name = 'McpClientRequestTimeoutError';
  }
}

/** The client answered a request the server sent it with a JSON-RPC error. */
export class McpClientRequestError extends Error {
  constructor(
    /** The method of the request. */
    readonly method: string,
    /** The JSON-RPC error code the client sent. */
    readonly code: number,
    message: string,
    /** The `data` of the client's error, if any. */
    readonly data?: unknown,
  ) {
    super(`The client refused ${method}: ${message} (${code})`);
    this.name = 'McpClientRequestError';
  }
}

/**
 * A handler used its context (`log`, `progress`, `elicit`, `sample`, `listRoots`) after the
 * request it belongs to was answered: nothing can reach the client any more. Typical of a tool
 * that starts work in the background and returns before it finishes.
 */
export class McpRequestEndedError extends Error {
  constructor(
    /** The context method that was called. */
    readonly operation: string,
    /** The id of the request whose response had already ended. */
    readonly requestId: string | number,
  ) {
    super(`ctx.${operation}() was called after the response to request ${JSON.stringify(requestId)} had ended`);
    this.name = 'McpRequestEndedError';
  }
}
