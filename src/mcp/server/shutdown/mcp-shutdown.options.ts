import { assertKnownOptions, McpConfigurationError, optionKeys } from '../../errors/mcp-configuration.errors';
import { invalidOptionMessage } from '../../mcp.messages';

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
   * `retryAfterSeconds`, so a client that honours `Retry-After` comes back after the close.
   * @default 500
   */
  quietPeriodMs?: number;
  /**
   * The `Retry-After` (seconds) of the 503 that refuses new requests while the app drains.
   * @default 1
   */
  retryAfterSeconds?: number;
}

/** The `shutdown` option after defaults. */
export interface McpResolvedShutdownOptions {
  /** Deadline of the requests in flight, in milliseconds. */
  drainTimeoutMs: number;
  /** Quiet time the drain waits for before the app closes, in milliseconds. */
  quietPeriodMs: number;
  /** `Retry-After` of the refusals while draining, in seconds. */
  retryAfterSeconds: number;
}

/** Default of `shutdown.drainTimeoutMs`. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;

/** Default of `shutdown.quietPeriodMs`. */
export const DEFAULT_QUIET_PERIOD_MS = 500;

const SHUTDOWN_OPTION_KEYS = optionKeys<McpShutdownOptions>({
  drainTimeoutMs: true,
  quietPeriodMs: true,
  retryAfterSeconds: true,
});

function integer(mount: string, option: string, value: unknown, fallback: number, minimum = 1): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum) {
    throw new McpConfigurationError(
      invalidOptionMessage(
        mount,
        `shutdown.${option}`,
        minimum === 0 ? 'an integer of 0 or more' : 'a positive integer',
      ),
    );
  }
  return value;
}

/** Applies the defaults of the `shutdown` option and refuses values that cannot work. */
export function resolveShutdownOptions(
  mount: string,
  options: McpShutdownOptions | undefined,
): McpResolvedShutdownOptions {
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new McpConfigurationError(
      invalidOptionMessage(mount, 'shutdown', 'an object ({ drainTimeoutMs?, quietPeriodMs?, retryAfterSeconds? })'),
    );
  }
  assertKnownOptions(options, SHUTDOWN_OPTION_KEYS, `McpModule (mount "${mount}") option "shutdown"`);
  return {
    drainTimeoutMs: integer(mount, 'drainTimeoutMs', options?.drainTimeoutMs, DEFAULT_DRAIN_TIMEOUT_MS),
    quietPeriodMs: integer(mount, 'quietPeriodMs', options?.quietPeriodMs, DEFAULT_QUIET_PERIOD_MS, 0),
    retryAfterSeconds: integer(mount, 'retryAfterSeconds', options?.retryAfterSeconds, 1),
  };
}
