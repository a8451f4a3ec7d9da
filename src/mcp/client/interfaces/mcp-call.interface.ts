/** One outbound MCP exchange as the queue carries it (Bull job data, or inline). */
export interface McpCallJob {
  /** Name of the configured server. */
  server: string;
  /** The JSON-RPC method, e.g. `tools/call`. */
  method: string;
  /** The JSON-RPC params. */
  params?: Record<string, unknown>;
  /** Whose remote session the call continues (`''` when shared). */
  scopeKey: string;
  /** The caller's timeout, in ms (spawn and handshake included); reported by `McpTimeoutError`. */
  timeoutMs: number;
  /**
   * When the call must be over, as `Date.now()` ms: set once when the call is made, so it spans
   * every attempt (the transport's retries and the queue's). An attempt stops at it, and no retry
   * starts after it. Absent on jobs queued by older versions: each attempt then has `timeoutMs`.
   */
  deadlineAt?: number;
}

/** Options of one call made through `McpClientService`. */
export interface McpCallOptions {
  /** Deadline of the call in ms. @default the server's `timeoutMs`, else the client's `defaultTimeoutMs` */
  timeoutMs?: number;
  /** Whose remote session to continue, for servers with `scope: 'principal'` (e.g. a user id). */
  scopeKey?: string;
  /**
   * Wait for the outcome (true) or return the call id at once (false) and fetch the outcome later
   * with `getCallResult` / `waitForCall`.
   * @default true
   */
  wait?: boolean;
  /** `_meta` sent with the request. */
  meta?: Record<string, unknown>;
}

/** What `getCallResult` reports about a call. */
export interface McpCallState {
  /** The call id (Bull job id, or an inline id). */
  id: string;
  /** `pending` (queued or running), `completed` or `failed`. */
  state: 'pending' | 'completed' | 'failed';
  /** The JSON-RPC result, when completed. */
  result?: Record<string, unknown>;
  /** The typed error, when failed. */
  error?: Error;
}

/** The arguments of a tool call: the JSON object the tool's input schema describes. */
export type McpToolArguments = Record<string, unknown>;
