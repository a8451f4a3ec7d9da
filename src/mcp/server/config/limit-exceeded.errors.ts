import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { LIMIT_EXCEEDED_CODE } from './mcp-limits.options';

const HTTP_STATUS = Symbol('mcpHttpStatus');
const HTTP_HEADERS = Symbol('mcpHttpHeaders');

/** What a refusal by a budget of calls (`rateLimit`) adds to the cap's error. */
export interface McpRetryHint {
  /** When the budget has room again, in milliseconds from now (`Retry-After`, `data.retryAfterMs`). */
  readonly retryAfterMs: number;
  /** The window of the budget, in milliseconds (`data.windowMs`). */
  readonly windowMs: number;
  /** The tool whose own budget refused the call (`data.tool`); absent for the mount's budget. */
  readonly tool?: string;
  /** The note of the audit row. */
  readonly note: string;
}

/**
 * An exceeded cap of `limits` found while a handler runs (inside the toolset, past the
 * endpoint's own checks), or a spent budget of calls (`rateLimit`): answered like the
 * endpoint's caps, HTTP 429 with JSON-RPC `-32000` and `data: { limit, max }` (with
 * `retryAfterMs` and `windowMs`, and a `Retry-After` header, for a budget), and the note in the
 * audit row.
 */
export class McpLimitExceededError extends McpRpcError {
  /** @internal */
  constructor(
    /** The name of the cap in `limits`, or `rateLimit`. */
    readonly limit: string,
    /** Its value. */
    readonly max: number,
    message: string,
    /** For a budget of calls: when to retry, and what the audit row says. */
    readonly retry?: McpRetryHint,
  ) {
    super(
      LIMIT_EXCEEDED_CODE,
      message,
      retry
        ? {
            limit,
            max,
            windowMs: retry.windowMs,
            retryAfterMs: retry.retryAfterMs,
            ...(retry.tool === undefined ? {} : { tool: retry.tool }),
          }
        : { limit, max },
    );
    this.name = 'McpLimitExceededError';
  }

  /** What the audit row says about the refusal (the caller sees the message). */
  get auditNote(): string {
    return this.retry?.note ?? `Refused: limits.${this.limit} (${this.max}) reached`;
  }
}

/** @internal The `Retry-After` header of a refusal that says when to retry (whole seconds, rounded up). */
export function retryAfterHeader(retryAfterMs: number): Record<string, string> {
  return { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) };
}

/**
 * @internal Attaches the HTTP status (and headers, such as `Retry-After`) the endpoint must
 * answer with to a response, off the wire.
 */
export function withHttpStatus<T extends object>(response: T, status: number, headers?: Record<string, string>): T {
  Object.defineProperty(response, HTTP_STATUS, { value: status, enumerable: false });
  if (headers) Object.defineProperty(response, HTTP_HEADERS, { value: headers, enumerable: false });
  return response;
}

/** @internal The HTTP headers a toolset attached to a response (a budget's `Retry-After`), or undefined. */
export function httpHeadersOf(response: object | null | undefined): Record<string, string> | undefined {
  return (response as Record<symbol, Record<string, string>> | null | undefined)?.[HTTP_HEADERS];
}

/** @internal The HTTP status a toolset attached to a response (an exceeded cap's 429), or null. */
export function httpStatusOf(response: object | null | undefined): number | null {
  return (response as Record<symbol, number> | null | undefined)?.[HTTP_STATUS] ?? null;
}
