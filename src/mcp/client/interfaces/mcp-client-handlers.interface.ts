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

/**
 * Receives `notifications/elicitation/complete`: the out-of-band interaction of a URL
 * elicitation is over. Called in the process that runs the call during which it arrived.
 */
export type McpElicitationCompleteListener = (params: { elicitationId: string }, context: { server: string }) => void;

/** What a sampling handler supports beyond plain completions (`@McpSamplingHandler(options)`). */
export interface McpSamplingHandlerOptions {
  /**
   * The handler accepts tool use (`tools` and `toolChoice` in the params, `tool_use` content in
   * its result): the client declares `sampling.tools`. Without it, a request carrying `tools` or
   * `toolChoice` is refused with -32602 before the handler runs.
   * @default false
   */
  tools?: boolean;
}

/** A sampling handler with its options, as `client.handlers.sampling` takes it. */
export interface McpSamplingHandlerConfig extends McpSamplingHandlerOptions {
  /** Answers `sampling/createMessage`. */
  handler: McpClientRequestHandler;
}

/** Handlers for the requests a server may send during a call. */
export interface McpClientHandlers {
  /**
   * Answers `sampling/createMessage` (the server asks our model for a completion). Declares the
   * `sampling` capability; give `{ handler, tools: true }` to declare `sampling.tools` as well.
   */
  sampling?: McpClientRequestHandler | McpSamplingHandlerConfig;
  /**
   * Answers form mode `elicitation/create` (the server asks the user for input). Declares the
   * `elicitation` capability with form mode.
   */
  elicitation?: McpClientRequestHandler;
  /**
   * Answers URL mode `elicitation/create`: the params carry `url`, `message` and, on 2025
   * sessions, `elicitationId`. Show the full URL, open it only with the user's consent, and
   * resolve to `{ action: 'accept' }` once they agreed (or `decline` / `cancel`). Declares the
   * `elicitation` capability with URL mode.
   */
  urlElicitation?: McpClientRequestHandler;
  /** Answers `roots/list` (which directories/URIs the server may work on). */
  roots?: McpClientRequestHandler;
  /**
   * Told when a server sends `notifications/elicitation/complete` (2025 sessions) during a
   * call. Ids the client does not know should be ignored.
   */
  elicitationComplete?: McpElicitationCompleteListener;
}

/** Which server->client request a handler answers. */
export type McpClientHandlerKind = 'sampling' | 'elicitation' | 'urlElicitation' | 'roots';
