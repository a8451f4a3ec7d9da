/** Settings of the SSE streams of a mount (POST answers that stream, GET streams). */
export interface McpStreamOptions {
  /**
   * How long `ctx.elicit`, `ctx.sample` and `ctx.listRoots` wait for the client's answer before
   * rejecting with `McpClientRequestTimeoutError`.
   * @default 300_000 (five minutes: elicitation waits on a person)
   */
  clientRequestTimeoutMs?: number;
  /**
   * Interval of the keep-alive comments on an idle GET stream (also how often the replica
   * holding it renews its claim on the session's stream).
   * @default 15_000
   */
  keepAliveMs?: number;
  /**
   * Reconnection delay announced to clients in the `retry` field of every stream's first event.
   * @default 1_000
   */
  retryMs?: number;
  /**
   * Bytes a stream may have queued for a client that does not read (socket buffer full). A
   * message that finds more than this queued closes the stream instead of growing the queue.
   * @default 4_194_304 (4 MiB)
   */
  maxBufferedBytes?: number;
  /**
   * Events kept per stream for clients that reconnect with `Last-Event-ID` (in Redis when
   * the mount has `redis`, so any replica resumes; in process memory otherwise).
   * @default 500
   */
  resumeEvents?: number;
  /**
   * How long a stream's events stay resumable after its last event, in ms.
   * @default 600_000 (ten minutes)
   */
  resumeTtlMs?: number;
  /**
   * Resumed POST streams (a GET with `Last-Event-ID` naming a request's stream whose response is
   * not sent yet) this process follows at once, reading the event log for what the request sends
   * next. A resumption beyond it gets what is kept so far and ends: the client comes back after
   * `retryMs` with its new `Last-Event-ID`. Each open resumption also counts against
   * `limits.streamsPerPrincipal`.
   * @default 1_000
   */
  resumeFollowers?: number;
}

/** Stream settings after defaults were applied. */
export type McpResolvedStreamOptions = Required<McpStreamOptions>;

/** Defaults of `McpStreamOptions`. */
export const DEFAULT_STREAM_OPTIONS: McpResolvedStreamOptions = {
  clientRequestTimeoutMs: 300_000,
  keepAliveMs: 15_000,
  retryMs: 1_000,
  maxBufferedBytes: 4_194_304,
  resumeEvents: 500,
  resumeTtlMs: 600_000,
  resumeFollowers: 1_000,
};
