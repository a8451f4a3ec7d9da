/** What a server->client request handler learns about the call it interrupts. */
export interface McpClientHandlerContext {
  /** Name of the configured server that asks. */
  server: string;
  /** Scope key of the call (`''` when shared). */
  scopeKey: string;
  /** The JSON-RPC method, e.g. `sampling/createMessage`. */
  method: string;
}

/**
 * Answers one server->client request: receives its `params`, resolves to the JSON-RPC result.
 * Throw an `McpRpcError` to answer with a JSON-RPC error.
 */
export type McpClientRequestHandler = (params: Record<string, unknown>, context: McpClientHandlerContext) => unknown;

/** Handlers for the requests a server may send during a call. */
export interface McpClientHandlers {
  /** Answers `sampling/createMessage` (the server asks our model for a completion). */
  sampling?: McpClientRequestHandler;
  /** Answers `elicitation/create` (the server asks the user for input). */
  elicitation?: McpClientRequestHandler;
  /** Answers `roots/list` (which directories/URIs the server may work on). */
  roots?: McpClientRequestHandler;
}

/** Which server->client request a handler answers. */
export type McpClientHandlerKind = keyof McpClientHandlers;
