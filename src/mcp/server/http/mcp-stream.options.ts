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
}

/** Stream settings after defaults were applied. */
export type McpResolvedStreamOptions = Required<McpStreamOptions>;

/** Defaults of `McpStreamOptions`. */
export const DEFAULT_STREAM_OPTIONS: McpResolvedStreamOptions = {
  clientRequestTimeoutMs: 300_000,
  keepAliveMs: 15_000,
  retryMs: 1_000,
};
