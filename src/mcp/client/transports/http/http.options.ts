import { assertKnownOptions, McpConfigurationError, optionKeys } from '../../../errors/mcp-configuration.errors';
import { LATEST_SESSION_PROTOCOL_VERSION } from '../../../protocol/revisions';
import type { McpClientAuth, McpTokenStore } from '../../auth/mcp-client-auth.interface';
import { MemoryTokenStore } from '../../auth/memory-token.store';
import type { McpHttpServerConfig } from '../../interfaces/mcp-server-config.interface';

/** Configuration of one `HttpTransport`: one remote Streamable HTTP endpoint. */
export interface HttpTransportOptions {
  /** The MCP endpoint, e.g. `https://example.com/mcp` (http or https). */
  url: string | URL;
  /**
   * Sent as `Authorization: Bearer <token>` on every request. Never copied into raw fields or
   * error messages.
   */
  bearerToken?: string;
  /**
   * Supplies the bearer token of every request (`staticToken`, `clientCredentials`, or your own
   * `McpClientAuth`); wins over `bearerToken`. After a 401, or a 403 `insufficient_scope`, the
   * token is invalidated and the request sent once more when a different token comes back.
   */
  auth?: McpClientAuth;
  /** Where `auth` keeps its tokens. @default a memory store of this transport */
  tokenStore?: McpTokenStore;
  /** Extra headers sent on every request (an `Authorization` here is treated as a secret too). */
  headers?: Record<string, string>;
  /** `clientInfo` of the initialize request. @default { name: 'durable-mcp', version: '0.1.0' } */
  clientInfo?: { name: string; version: string; [key: string]: unknown };
  /**
   * Client capabilities announced in initialize. Announce `sampling`, `elicitation` or `roots`
   * only when the callers pass an `onServerRequest` handler that answers them.
   * @default {}
   */
  capabilities?: Record<string, unknown>;
  /** The revision asked for in initialize. @default '2025-11-25' */
  protocolVersion?: string;
  /** Retries with backoff inside one deliver. */
  retry?: McpHttpServerConfig.Retry;
  /**
   * Cap of `rawResponse`, in characters: an SSE stream is recorded up to our response, then cut.
   * @default 262144
   */
  maxRawResponseLength?: number;
  /** How many times a POST's SSE stream that ends early is resumed with GET + Last-Event-ID. @default 3 */
  maxStreamResumptions?: number;
  /**
   * Time allowed for a `notifications/cancelled` sent after a timeout or abort, in ms; never more
   * than the call's own `timeoutMs` (or one second, whichever is longer), so a timed-out call is
   * reported within about twice its deadline.
   * @default 5000
   */
  cancelNoticeTimeoutMs?: number;
  /**
   * Largest response body read, in bytes: a JSON answer, or the body of an HTTP error (which is
   * cut there instead). A larger answer fails with `McpProtocolError` (delivered) as soon as the
   * limit is passed, without reading the rest. Sized so that the queue's concurrency (8) times
   * this limit, with decoding and parsing on top, fits a 512 MB worker.
   * @default 16777216 (16 MiB)
   */
  maxResponseBytes?: number;
  /**
   * Largest server-sent event, in characters (its unfinished line plus its `data` so far). A
   * larger one, or an endless line without a newline, fails with `McpProtocolError` (delivered)
   * once the limit is passed.
   * @default 16777216
   */
  maxEventChars?: number;
}

/** Options with every default applied and the URL parsed. */
export interface ResolvedHttpTransportOptions {
  url: URL;
  bearerToken: string | null;
  auth: McpClientAuth | null;
  tokenStore: McpTokenStore;
  headers: Record<string, string>;
  clientInfo: { name: string; version: string; [key: string]: unknown };
  capabilities: Record<string, unknown>;
  protocolVersion: string;
  retries: number;
  initialDelayMs: number;
  maxDelayMs: number;
  maxRawResponseLength: number;
  maxStreamResumptions: number;
  cancelNoticeTimeoutMs: number;
  maxResponseBytes: number;
  maxEventChars: number;
}

/** Default `maxResponseBytes` and `maxEventChars`: 16 MiB (8 concurrent calls hold at most 128 MiB of payload). */
export const HTTP_DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024;

/** The keys of `McpHttpServerConfig.Retry`. */
export const HTTP_RETRY_OPTION_KEYS = optionKeys<McpHttpServerConfig.Retry>({
  retries: true,
  initialDelayMs: true,
  maxDelayMs: true,
});

const HTTP_OPTION_KEYS = optionKeys<HttpTransportOptions>({
  url: true,
  bearerToken: true,
  auth: true,
  tokenStore: true,
  headers: true,
  clientInfo: true,
  capabilities: true,
  protocolVersion: true,
  retry: true,
  maxRawResponseLength: true,
  maxStreamResumptions: true,
  cancelNoticeTimeoutMs: true,
  maxResponseBytes: true,
  maxEventChars: true,
});

/** Default `clientInfo` of the initialize request. */
export const HTTP_DEFAULT_CLIENT_INFO = { name: 'durable-mcp', version: '0.1.0' } as const;

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) {
    throw new McpConfigurationError(
      `HttpTransport option "${name}" must be a number >= 0 (got ${String(value)}); remove it to use the default ${fallback}.`,
    );
  }
  return value;
}

function positiveLimit(name: string, value: number | undefined): number {
  if (value === undefined) return HTTP_DEFAULT_MAX_MESSAGE_SIZE;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new McpConfigurationError(
      `HttpTransport option "${name}" must be an integer >= 1 (got ${String(value)}); remove it to use the default ${HTTP_DEFAULT_MAX_MESSAGE_SIZE}.`,
    );
  }
  return value;
}

function parseUrl(url: string | URL): URL {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    throw new McpConfigurationError(
      `HttpTransport option "url" is not a valid URL (got "${String(url)}"); give the full MCP endpoint, e.g. "https://example.com/mcp".`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new McpConfigurationError(
      `HttpTransport option "url" must use http or https (got "${parsed.protocol}"); use StdioTransport for local processes.`,
    );
  }
  return parsed;
}

/** Validates the options and applies the defaults; throws `McpConfigurationError` saying how to fix a mistake. */
export function resolveHttpTransportOptions(options: HttpTransportOptions): ResolvedHttpTransportOptions {
  assertKnownOptions(options, HTTP_OPTION_KEYS, 'HttpTransport');
  assertKnownOptions(options.retry, HTTP_RETRY_OPTION_KEYS, 'HttpTransport option "retry"');
  const retry = options.retry ?? {};
  return {
    url: parseUrl(options.url),
    bearerToken: options.bearerToken ? options.bearerToken : null,
    auth: options.auth ?? null,
    tokenStore: options.tokenStore ?? new MemoryTokenStore(),
    headers: { ...(options.headers ?? {}) },
    clientInfo: options.clientInfo ?? { ...HTTP_DEFAULT_CLIENT_INFO },
    capabilities: options.capabilities ?? {},
    protocolVersion: options.protocolVersion ?? LATEST_SESSION_PROTOCOL_VERSION,
    retries: Math.floor(nonNegative('retry.retries', retry.retries, 2)),
    initialDelayMs: nonNegative('retry.initialDelayMs', retry.initialDelayMs, 100),
    maxDelayMs: nonNegative('retry.maxDelayMs', retry.maxDelayMs, 2000),
    maxRawResponseLength: nonNegative('maxRawResponseLength', options.maxRawResponseLength, 256 * 1024),
    maxStreamResumptions: Math.floor(nonNegative('maxStreamResumptions', options.maxStreamResumptions, 3)),
    cancelNoticeTimeoutMs: nonNegative('cancelNoticeTimeoutMs', options.cancelNoticeTimeoutMs, 5000),
    maxResponseBytes: positiveLimit('maxResponseBytes', options.maxResponseBytes),
    maxEventChars: positiveLimit('maxEventChars', options.maxEventChars),
  };
}
