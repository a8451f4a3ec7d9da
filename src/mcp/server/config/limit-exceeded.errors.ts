import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { LIMIT_EXCEEDED_CODE } from './mcp-limits.options';

const HTTP_STATUS = Symbol('mcpHttpStatus');

/**
 * An exceeded cap of `limits` found while a handler runs (inside the toolset, past the
 * endpoint's own checks): answered like the endpoint's caps, HTTP 429 with JSON-RPC `-32000`
 * and `data: { limit, max }`, and the note in the audit row.
 */
export class McpLimitExceededError extends McpRpcError {
  /** @internal */
  constructor(
    /** The name of the cap in `limits`. */
    readonly limit: string,
    /** Its value. */
    readonly max: number,
    message: string,
  ) {
    super(LIMIT_EXCEEDED_CODE, message, { limit, max });
    this.name = 'McpLimitExceededError';
  }

  /** What the audit row says about the refusal (the caller sees the message). */
  get auditNote(): string {
    return `Refused: limits.${this.limit} (${this.max}) reached`;
  }
}

/** @internal Attaches the HTTP status the endpoint must answer with to a response, off the wire. */
export function withHttpStatus<T extends object>(response: T, status: number): T {
  Object.defineProperty(response, HTTP_STATUS, { value: status, enumerable: false });
  return response;
}

/** @internal The HTTP status a toolset attached to a response (an exceeded cap's 429), or null. */
export function httpStatusOf(response: object | null | undefined): number | null {
  return (response as Record<symbol, number> | null | undefined)?.[HTTP_STATUS] ?? null;
}
