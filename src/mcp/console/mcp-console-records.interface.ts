import type { McpEventRecord } from '../persistence/interfaces/mcp-event-sink.interface';

/** Where a keyset page starts: strictly older than this time, or as old with a smaller id. */
export interface McpConsoleCursor {
  /** The time of the last row of the previous page. */
  at: Date;
  /** The id of that row. */
  id: string;
}

/** One page of rows, newest first, and where the next (older) page starts. */
export interface McpConsolePage<T> {
  /** The rows of this page. */
  rows: T[];
  /** The cursor of the next page, or null on the last one. */
  next: McpConsoleCursor | null;
}

/** What the console shows of a session. */
export interface McpConsoleSession {
  /** Row id. */
  id: string;
  /** The mount that served it. */
  mount: string;
  /** The principal's key. */
  principalKey: string;
  /** The principal's human-readable label. */
  principalLabel: string;
  /** `clientInfo.name`, when the client sent it. */
  clientName: string | null;
  /** `clientInfo.version`, when the client sent it. */
  clientVersion: string | null;
  /** The negotiated revision. */
  protocolVersion: string;
  /** When initialize created the session. */
  createdAt: Date;
  /** When a request last used it. */
  lastSeenAt: Date;
  /** When it was ended; null while open. */
  terminatedAt: Date | null;
  /** `live`, `ended` (terminated) or `expired` (idle past the TTL). */
  state: 'live' | 'ended' | 'expired';
}

/** What the console shows of a task (never its arguments or outcome). */
export interface McpConsoleTask {
  /** The task id. */
  id: string;
  /** The mount serving the tool. */
  mount: string;
  /** The tool called. */
  toolName: string;
  /** `working`, `input_required`, `completed`, `failed` or `cancelled`. */
  status: string;
  /** The owning principal. */
  principalKey: string;
  /** The latest status message. */
  statusMessage: string | null;
  /** When the task was created. */
  createdAt: Date;
  /** When it last changed. */
  updatedAt: Date;
}

/** An audit row as the console shows it: the stored row plus the tool name of a `tools/call`. */
export interface McpConsoleEvent extends McpEventRecord {
  /** `params.name` of a `tools/call` request, else null. */
  tool: string | null;
}

/** The filters of the events page; every one optional. */
export interface McpConsoleEventFilter {
  /** Only this principal key. */
  principal?: string;
  /** Only this JSON-RPC method. */
  method?: string;
  /** Only `tools/call` rows of this tool (`params.name` of the stored request). */
  tool?: string;
  /** `ok`: no error code, no `isError`, HTTP status below 400; `error`: any of them. */
  status?: 'ok' | 'error';
  /** Inclusive lower bound of `created_at`. */
  from?: Date;
  /** Exclusive upper bound of `created_at`. */
  to?: Date;
}

/** Per-minute throughput and latency of the last hour, as uPlot series. */
export interface McpConsoleThroughput {
  /** Start of each minute, in Unix seconds (oldest first). */
  t: number[];
  /** Requests that started in that minute. */
  count: number[];
  /** Those of them that failed (a JSON-RPC error, an `isError` result or an HTTP status of 400 and up). */
  errors: number[];
  /** Median of their `duration_ms`, or null for a minute without requests. */
  p50: (number | null)[];
  /** 95th percentile (nearest rank) of their `duration_ms`, or null for a minute without requests. */
  p95: (number | null)[];
  /** True when the hour held more rows than were read (the series then cover the newest ones). */
  truncated: boolean;
}
