/**
 * What a worker needs to run a task's tool call on any replica, kept on the task's row: the
 * arguments, the request's `_meta` (its progress token), and who called.
 */
export interface McpTaskPayload {
  /** The tool's arguments, as the client sent them. */
  arguments: Record<string, unknown>;
  /** The `_meta` of the `tools/call` request, without the task. */
  meta: Record<string, unknown> | null;
  /** The caller, without anything that does not serialize. */
  principal: { key: string; label: string; scopes?: readonly string[]; roles?: readonly string[]; raw: unknown };
  /** The protocol revision of the session that created the task. */
  protocolVersion: string;
  /** The session's log level when the task was created. */
  logLevel: string | null;
  /**
   * The client capabilities the creating request declared (what `ctx.elicit`, `sample` and
   * `listRoots` inside the task may ask); absent in rows written before they were kept.
   */
  clientCapabilities?: Record<string, unknown> | null;
  /**
   * The answers the client gave, by key, in the `input_required` rounds of the `tools/call`
   * before the handler created the task (`inputBeforeTask`): the worker hands them back to the
   * same requests of the handler. Absent for a task created before its handler started.
   */
  answers?: Record<string, Record<string, unknown>> | null;
  /**
   * The trace context (W3C `traceparent`, `tracestate`, `baggage`) of the exchange that created
   * the task, when an OpenTelemetry SDK was registered: the worker's run continues that trace.
   */
  trace?: Record<string, string>;
}

/** One task of a mount (`mcp_tasks`): a task-augmented `tools/call` and where it stands. */
export interface McpTaskRecord {
  /** The task id (crypto-random, also sent to the client as `taskId`). */
  id: string;
  /** The mount serving the tool. */
  mount: string;
  /** The owning principal (stored form). */
  principalKey: string;
  /** The 2025 session that created the task, if any. */
  sessionId: string | null;
  /** The tool called. */
  toolName: string;
  /** SHA-256 (hex) of the arguments as canonical JSON. */
  argumentsDigest: string;
  /** What a worker needs to run the call. */
  payload: McpTaskPayload;
  /** `working`, `input_required`, `completed`, `failed` or `cancelled`. */
  status: string;
  /** The latest status message. */
  statusMessage: string | null;
  /**
   * The terminal answer: `{ result }` (a `CallToolResult`) or `{ error }` (a JSON-RPC error
   * object). While the task is `input_required`: `{ inputRequests }`, its outstanding requests to
   * the client by key (each `{ method, params }`).
   */
  outcome: Record<string, unknown> | null;
  /** Lifetime from creation in milliseconds; null for unlimited. */
  ttlMs: number | null;
  /** Suggested polling interval in milliseconds. */
  pollIntervalMs: number;
  /** When the task was created. */
  createdAt: Date;
  /** When the task last changed. */
  updatedAt: Date;
  /** When the task stops being served (`createdAt + ttlMs`); null for never. */
  expiresAt: Date | null;
  /** When a worker last claimed the task. */
  startedAt: Date | null;
  /** The worker that claimed the task (null until one does). */
  worker: string | null;
  /** How many times a worker claimed the task. */
  attempt: number;
}

/** The fields a new task starts with; the store fills in the rest. */
export type McpNewTask = Pick<
  McpTaskRecord,
  | 'id'
  | 'principalKey'
  | 'sessionId'
  | 'toolName'
  | 'argumentsDigest'
  | 'payload'
  | 'statusMessage'
  | 'ttlMs'
  | 'pollIntervalMs'
>;

/**
 * The tasks of one mount. Every change is one conditional statement, so two replicas racing
 * (a cancel against a finish, two workers against one claim) never both win.
 */
export interface McpTaskStore {
  /** Stores a new task in `working`; resolves with its row. */
  create(task: McpNewTask, now?: Date): Promise<McpTaskRecord>;
  /** The task, or null when there is none of that id on this mount (expiry is the caller's rule). */
  get(id: string): Promise<McpTaskRecord | null>;
  /**
   * The tasks of `principalKey` not expired at `now`, newest first (ties by id), skipping
   * `offset` and returning at most `limit`. With `sessionId`, only the tasks created in that
   * session: an anonymous caller's tasks are bound to its session, not to the shared key.
   */
  list(principalKey: string, now: Date, offset: number, limit: number, sessionId?: string): Promise<McpTaskRecord[]>;
  /**
   * The tasks of `principalKey` among `ids`, in any order (unknown ids and other principals'
   * tasks are left out; expiry is the caller's rule), read in one statement whatever the number
   * of ids, so a long list holds a connection no longer than one query.
   */
  getMany(ids: readonly string[], principalKey: string): Promise<McpTaskRecord[]>;
  /**
   * How many tasks of `principalKey` are not over (`working` or `input_required`) and not
   * expired at `now`: what `limits.tasksPerPrincipal` counts, across every replica.
   */
  countOpen(principalKey: string, now: Date): Promise<number>;
  /**
   * Claims a `working` task for `worker`: only when its current claim is `previous` (null: never
   * claimed). Adds one to `attempt`. Resolves false when someone else holds it or it is over.
   */
  claim(id: string, worker: string, previous: string | null, now?: Date): Promise<boolean>;
  /** Sets the status message of a task that is not over; resolves with the row, or null when it is over or gone. */
  setMessage(id: string, statusMessage: string | null, now?: Date): Promise<McpTaskRecord | null>;
  /**
   * Moves a task that is not over to a terminal status with its outcome (and `statusMessage`,
   * when given: otherwise the last one stays); resolves with the row, or null when it was already
   * over (then nothing changed).
   */
  finish(
    id: string,
    status: string,
    statusMessage: string | undefined,
    outcome: Record<string, unknown> | null,
    now?: Date,
  ): Promise<McpTaskRecord | null>;
  /**
   * Sets the outstanding input requests of a task that is not over: with some, the task becomes
   * `input_required` and `outcome` holds `{ inputRequests }`; with none (null or empty), it is
   * `working` again with no outcome. Resolves with the row, or null when it is over or gone.
   */
  setInputRequests(
    id: string,
    inputRequests: Record<string, unknown> | null,
    now?: Date,
  ): Promise<McpTaskRecord | null>;
  /** The `working` and `input_required` tasks of the mount, claimed or not (the boot sweep of a process without a queue that redelivers). */
  unfinished(): Promise<McpTaskRecord[]>;
}
