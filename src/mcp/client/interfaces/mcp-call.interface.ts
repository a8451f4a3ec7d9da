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
  /**
   * The `_meta.progressToken` the request carries when the caller passed `onProgress`: the worker
   * forwards `notifications/progress` with this token (and no other) to the caller.
   */
  progressToken?: string;
  /** The caller passed `onLog`: the worker forwards the log messages of the call's own stream. */
  forwardLogs?: boolean;
  /** The caller may abort the call (it passed a `signal`): the worker listens for its abort. */
  abortable?: boolean;
}

/** A `notifications/progress` the server sent for a call (see `McpCallOptions.onProgress`). */
export interface McpCallProgress {
  /** Progress so far; increases with every notification. */
  progress: number;
  /** The total, when the server knows it. */
  total?: number;
  /** A human-readable message about the progress, when the server sent one. */
  message?: string;
}

/** A `notifications/message` (log message) the server sent while a call ran (see `McpCallOptions.onLog`). */
export interface McpCallLogMessage {
  /** The severity, e.g. `info` or `error` (RFC 5424 names). */
  level: string;
  /** Which logger of the server wrote it, when named. */
  logger?: string;
  /** The logged data: a string or any JSON value. */
  data: unknown;
}

/** What a worker reports to the caller of one call while it runs. */
export type McpCallEvent = { kind: 'progress'; progress: McpCallProgress } | { kind: 'log'; log: McpCallLogMessage };

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
  /**
   * Receives the server's `notifications/progress` for this call, in the order they arrived. The
   * request then carries a `_meta.progressToken` unique to the call, and only notifications with
   * that token reach the callback. With Bull the worker may be another process: the notifications
   * come through Redis pub/sub. A callback that throws is ignored (and does not stop the call).
   * Only with `wait: true`: a call that returns its id at once outlives the callback's caller, so
   * `wait: false` with `onProgress` is refused (`McpConfigurationError`).
   */
  onProgress?: (progress: McpCallProgress) => void;
  /**
   * Receives the log messages (`notifications/message`) the server sent on this call's own
   * response stream while it ran (a 2025 POST's SSE stream or a stateless request's; a stdio
   * server's output during the call), in order. Log messages a server sends on a 2025 session's
   * standalone stream belong to no call and do not reach it. Delivered like `onProgress`; also
   * refused with `wait: false`. Which levels are sent is the server's `setLogLevel` business.
   */
  onLog?: (message: McpCallLogMessage) => void;
  /**
   * Aborts the call. Before the call was sent (still queued) the job is dropped and the call
   * rejects with `McpCallAbortedError` (`delivered: false`); once sent, the worker (in whichever
   * process runs it) tells the server to stop (`notifications/cancelled` with the request id and
   * the abort reason; closing the response stream on the stateless revision over HTTP) and the
   * call rejects with `McpCallAbortedError` (`delivered: true`). An aborted call is never retried.
   * Refused with `wait: false`, like the callbacks.
   */
  signal?: AbortSignal;
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
