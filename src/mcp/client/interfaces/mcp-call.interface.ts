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
  /**
   * The caller answers the server's requests of the call (it passed `onServerRequest`): a Bull
   * worker relays them to the caller's process through Redis.
   */
  answerable?: boolean;
  /**
   * Call the tool as a task (a `tools/call` only): on 2025-11-25 the request carries
   * `params.task` when the server declared `tasks.requests.tools.call`; on 2026-07-28 its client
   * capabilities declare the tasks extension. A task the server created is polled to its end.
   */
  task?: McpCallTaskOptions;
  /**
   * The caller's trace context (W3C `traceparent`, `tracestate`, `baggage`), captured at enqueue
   * time when an OpenTelemetry SDK is registered: the worker, in whichever process, continues
   * the caller's trace. Absent without an SDK.
   */
  trace?: Record<string, string>;
  /**
   * A 2026-07-28 server's `input_required` answer ends the call with that result, as the caller
   * asked (`McpCallOptions.inputRequired: 'return'`), instead of being fulfilled and retried.
   */
  returnInputRequired?: boolean;
}

/** How to run a tool call as a task (see `McpCallOptions.task`). */
export interface McpCallTaskOptions {
  /**
   * How long the server should keep the task and its result after it was created, in ms (`ttl`
   * on 2025-11-25; ignored by 2026-07-28 servers, which choose it). The server may shorten it.
   * @default the server's choice
   */
  ttlMs?: number;
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

/** A request the server sent to the client during a call (see `McpCallOptions.onServerRequest`). */
export interface McpCallServerRequest {
  /** The JSON-RPC method, e.g. `elicitation/create`. */
  method: string;
  /** The JSON-RPC params. */
  params: Record<string, unknown>;
}

/**
 * Answers a server request of one call: resolves to the JSON-RPC result, or rejects (an
 * `McpRpcError` keeps its code; any other error is sent as -32603).
 */
export type McpCallServerRequestHandler = (
  request: McpCallServerRequest,
  options: { signal?: AbortSignal },
) => Promise<Record<string, unknown>>;

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
   * Answers the requests the server sends during this call (`elicitation/create`,
   * `sampling/createMessage`, `roots/list`; not `ping`) before the app-wide `@McpClientHandler`
   * handlers, e.g. by passing them on to another client (the gateway does). Its `signal` fires
   * when the call is aborted. With Bull the worker (any process) relays the requests through
   * Redis pub/sub to this process and the answers back; a caller gone or silent gives the server
   * -32603 (at once, or at the call's deadline). Like `onProgress`, refused with `wait: false`
   * (`McpConfigurationError`). A handshake the call makes itself (a spawn-per-call stdio server)
   * and a 2026-07-28 request announce roots, sampling and form elicitation besides the app-wide
   * handlers' capabilities; a shared handshake (a 2025-11-25 HTTP session, a pooled stdio
   * process) announces the app-wide handlers' ones and those the server entry's `announce` names.
   */
  onServerRequest?: McpCallServerRequestHandler;
  /**
   * Aborts the call. Before the call was sent (still queued) the job is dropped and the call
   * rejects with `McpCallAbortedError` (`delivered: false`); once sent, the worker (in whichever
   * process runs it) tells the server to stop (`notifications/cancelled` with the request id and
   * the abort reason; closing the response stream on the stateless revision over HTTP) and the
   * call rejects with `McpCallAbortedError` (`delivered: true`). An aborted call is never retried.
   * Refused with `wait: false`, like the callbacks.
   * On a call that runs as a task, aborting once the task exists sends `tasks/cancel` for it
   * (both revisions) and rejects with `McpCallAbortedError` (`delivered: true`).
   */
  signal?: AbortSignal;
  /**
   * Calls the tool as a task (`callTool` only; other methods ignore it): the server answers at
   * once with a task, which the worker polls (`tasks/get`, as often as the server's poll interval
   * says, between 100 ms and 10 s) until it is over, then returns the tool's result as a plain
   * call would. The task id is stored with the call before the first poll, so a worker that dies
   * meanwhile is replaced by one that resumes polling the same task and never calls the tool
   * again. Servers that do not support tasks (2025: no `tasks.requests.tools.call` capability; a
   * tool without `execution.taskSupport`; 2026: the server decides) answer a plain result, which
   * is returned as it is. A tool whose `execution.taskSupport` is `forbidden` is refused with
   * `McpTaskNotSupportedError` before anything is sent; one whose support is `required` is
   * called as a task even without this option, when its definition is in the tool list cache.
   * The call's deadline (`timeoutMs`) bounds the whole task: it defaults to `task.ttlMs` when
   * that is given and `timeoutMs` is not (a long task needs a long deadline). A task still
   * running at the deadline is cancelled (`tasks/cancel`) and the call fails with
   * `McpTimeoutError` (`delivered: true`).
   */
  task?: McpCallTaskOptions;
  /**
   * What a 2026-07-28 server's `input_required` answer does to the call: `'answer'` fulfils its
   * input requests (with `onServerRequest`, else the app-wide handlers) and retries, at most
   * `maxInputRounds` times; `'return'` resolves the call with that result as the server sent it
   * (`resultType: 'input_required'`, its `inputRequests` and `requestState`), for a caller that
   * passes the requests on (the gateway does, to a 2026-07-28 caller) and calls again with
   * `inputRetry`. Servers on a 2025 revision never answer `input_required`.
   * @default 'answer'
   */
  inputRequired?: 'answer' | 'return';
  /**
   * The retry fields of a request that follows an `input_required` result the call returned
   * (`inputRequired: 'return'`): `inputResponses` keyed like its `inputRequests`, and its
   * `requestState` untouched. They go with the request's params.
   */
  inputRetry?: { inputResponses?: Record<string, unknown>; requestState?: string };
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
