import type { ResolvedOptions } from '../../options/options-model';
import type { MCP_MODULE_OPTIONS_MODEL } from '../mcp-module-model.options';

/** How a mount ends when the app shuts down (SIGTERM with `app.enableShutdownHooks()`, or `app.close()`). */
export interface McpShutdownOptions {
  /**
   * How long requests already in flight may run once the app started to shut down. New sessions
   * and new requests are refused with 503 and `Retry-After` from the first moment; past this
   * deadline the calls still running see their `AbortSignal` fire, and a call that does not end
   * soon after is answered with a JSON-RPC error. Every one of them keeps its audit row.
   * @default 10_000 (ten seconds)
   */
  drainTimeoutMs?: number;
  /**
   * The drain also waits, within `drainTimeoutMs`, until no request arrived or ended for this
   * long: a client that sent its next request right after an answer (or before its load balancer
   * saw readiness go down) gets the 503 rather than a connection reset when the server closes.
   * A drain that found nothing in flight and refused nothing closes at once. The same period
   * bounds the close of the HTTP server: after a drain that refused requests, the listener closes
   * once no connection arrived for this long (the last refusals wait for it), and a keep-alive
   * connection is closed once it stayed idle for this long. Keep it shorter than
   * `retryAfterMs`, so a client that honours `Retry-After` comes back after the close.
   * @default 500
   * @minimum 0
   */
  quietPeriodMs?: number;
  /**
   * The `Retry-After` of the 503 that refuses new requests while the app drains, in
   * milliseconds; the header carries it rounded up to whole seconds.
   * @default 1000
   */
  retryAfterMs?: number;
}

/** The `shutdown` option after defaults. */
export type McpResolvedShutdownOptions = ResolvedOptions<
  McpShutdownOptions,
  (typeof MCP_MODULE_OPTIONS_MODEL)['advanced']['options']['shutdown']['options']
>;

/** Default of `shutdown.drainTimeoutMs`. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;

/** Default of `shutdown.quietPeriodMs`. */
export const DEFAULT_QUIET_PERIOD_MS = 500;
