/** Which way an exchange went. */
export type McpEventDirection = 'inbound' | 'outbound';

/**
 * One audit row: an exchange that reached a session (inbound) or a remote server (outbound),
 * failed ones included. Never holds a bearer token.
 */
export interface McpEventRecord {
  /** Row id (UUID). */
  id: string;
  /** When the exchange started. */
  createdAt: Date;
  /** `inbound` (a client called us) or `outbound` (we called a server). */
  direction: McpEventDirection;
  /** The mount that served an inbound exchange. */
  mount: string | null;
  /** The remote server of an outbound exchange. */
  server: string | null;
  /** Id of the inbound (or outbound) session record, when there is one. */
  sessionRef: string | null;
  /** Key of the principal behind the exchange. */
  principalKey: string | null;
  /** `request`, `notification`, `response` (a client's answer) or `terminate` (DELETE). */
  kind: string;
  /** The JSON-RPC method, when the message had one. */
  method: string | null;
  /** The protocol revision the exchange spoke. */
  protocolVersion: string | null;
  /** The JSON-RPC message received (inbound) or sent (outbound); may arrive as `JsonText`. */
  request: unknown;
  /** The JSON-RPC response, when there was one; may arrive as `JsonText`. */
  response: unknown;
  /** HTTP status (inbound, or outbound over HTTP). */
  status: number | null;
  /** JSON-RPC error code of the response, when it was an error. */
  errorCode: number | null;
  /** True when a `tools/call` result had `isError: true`. */
  isError: boolean;
  /** How long the exchange took, in milliseconds. */
  durationMs: number;
  /** Wire notes: stderr excerpts, transport errors. */
  note: string | null;
  /**
   * The OpenTelemetry trace id of the exchange (32 lower-case hex characters), when its span
   * context was valid; null without one. Left out, the active span's trace id is taken.
   */
  traceId: string | null;
}

/** The fields a caller gives for one event; the sink fills in the id and the defaults (null, false). */
export type McpEventInput = Omit<Partial<McpEventRecord>, 'id'> &
  Pick<McpEventRecord, 'direction' | 'kind' | 'createdAt' | 'durationMs'>;

/**
 * Where the audit rows go. `record` resolves only once the row is durable, so a response never
 * gets ahead of its audit row; it rejects when the row could not be stored.
 */
export interface McpEventSink {
  /** Stores one event. */
  record(event: McpEventInput): Promise<void>;
  /** Optional: rows accepted and not stored yet (a group committer's backlog), for health checks. */
  readonly backlog?: number;
}
