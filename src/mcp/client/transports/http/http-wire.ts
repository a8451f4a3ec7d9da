import { McpHeader } from '../../../protocol/mcp-methods';
import { McpTransportError } from '../../../errors/mcp-client.errors';
import type { McpAuthChallenge, McpAuthTarget } from '../../auth/mcp-client-auth.interface';
import { HttpSecrets } from './http-secrets';
import { injectHttpHeaders } from '../../../telemetry/trace-carriers';
import type { ResolvedHttpTransportOptions } from './http.options';

/** The remote session a request belongs to: the id to echo and the negotiated revision. */
export interface HttpSession {
  id: string | null;
  protocolVersion: string | null;
}

/**
 * The network failed before an HTTP response arrived (or while its body was read). `notSent`
 * is true only when the message provably never left: the connection could not be opened.
 */
export class HttpSendFailure extends Error {
  constructor(
    message: string,
    readonly notSent: boolean,
  ) {
    super(message);
    this.name = 'HttpSendFailure';
  }
}

/** Error codes that mean the connection was never opened, so nothing was written. */
const NOT_CONNECTED_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function causes(error: unknown, depth = 0): unknown[] {
  if (!error || typeof error !== 'object' || depth > 4) return [];
  // Duck-typed: errors from undici may come from another realm than this module's `Error`.
  const errors = (error as { errors?: unknown }).errors;
  const nested = Array.isArray(errors) ? errors : [];
  const cause = (error as { cause?: unknown }).cause;
  return [error, ...nested.flatMap((e) => causes(e, depth + 1)), ...causes(cause, depth + 1)];
}

function neverConnected(error: unknown): boolean {
  return causes(error).some((e) => {
    const { code, message } = e as { code?: unknown; message?: unknown };
    return (typeof code === 'string' && NOT_CONNECTED_CODES.has(code)) || message === 'bad port';
  });
}

function describeFailure(error: unknown): string {
  const deepest = causes(error)
    .reverse()
    .find((e) => typeof (e as { message?: unknown }).message === 'string' && (e as { message: string }).message !== '');
  return deepest ? (deepest as { message: string }).message : String(error);
}

/** Turns any network error into an `HttpSendFailure`; `afterSend` forbids claiming `notSent`. */
export function toSendFailure(error: unknown, afterSend: boolean): HttpSendFailure {
  return new HttpSendFailure(describeFailure(error), !afterSend && neverConnected(error));
}

/** What one HTTP request to the endpoint carries. */
export interface HttpWireRequest {
  method: 'POST' | 'GET' | 'DELETE';
  session: HttpSession | null;
  signal: AbortSignal;
  body?: string;
  /** `Last-Event-ID` when resuming an SSE stream. */
  lastEventId?: string;
  /** Headers of this request only (the routing headers of a stateless request). */
  extraHeaders?: Record<string, string>;
  /** The bearer token to send, already got with `bearer()`; by default `send` gets it. */
  bearer?: string | null;
}

/**
 * Sends HTTP requests to one MCP endpoint with the right headers: Accept, Content-Type, the
 * credentials from the options, and the session id and protocol revision once known.
 */
export class HttpWire {
  /** The secrets to cut out of every text that leaves the transport. */
  readonly secrets: HttpSecrets;
  /** The endpoint for messages, without credentials or query. */
  readonly endpointLabel: string;

  private readonly url: URL;

  constructor(private readonly options: ResolvedHttpTransportOptions) {
    this.secrets = new HttpSecrets(options.bearerToken, options.headers);
    this.endpointLabel = `${options.url.origin}${options.url.pathname}`;
    this.url = options.url;
  }

  /** What the auth provider is told about the request: the endpoint, and the call's server and scope key. */
  private target(context?: { server: string; scopeKey: string }): McpAuthTarget {
    return context ? { url: this.url, server: context.server, scopeKey: context.scopeKey } : { url: this.url };
  }

  /** Whether tokens come from an auth provider (so a refused one may be replaced). */
  get refreshable(): boolean {
    return this.options.auth !== null;
  }

  /**
   * The bearer token of the next request: from the auth provider (added to the secrets), else
   * the static `bearerToken`. A provider failure is an `McpTransportError` that delivered nothing.
   */
  async bearer(context?: { server: string; scopeKey: string }): Promise<string | null> {
    const { auth, tokenStore } = this.options;
    if (!auth) return this.options.bearerToken;
    let token: string;
    try {
      token = await auth.getToken(this.target(context), tokenStore);
    } catch (error) {
      const failure = new McpTransportError(
        `Could not get an access token for ${this.endpointLabel}: ${this.secrets.redact((error as Error).message)}`,
        false,
      );
      // The provider's own error (e.g. McpUntrustedAuthorizationServerError), for a caller in this process.
      failure.cause = error;
      throw failure;
    }
    if (typeof token !== 'string' || token === '')
      throw new McpTransportError(`The auth provider of ${this.endpointLabel} gave no token`, false);
    this.secrets.add(token);
    return token;
  }

  /**
   * Tells the auth provider that the server refused `token`. A provider that refuses the
   * challenge (one asking for too many scopes, say) fails the request with an
   * `McpTransportError` that delivered nothing, with the provider's error as its `cause`.
   */
  async invalidate(
    token: string,
    challenge: McpAuthChallenge,
    context?: { server: string; scopeKey: string },
  ): Promise<void> {
    try {
      await this.options.auth?.invalidate(this.target(context), this.options.tokenStore, token, challenge);
    } catch (error) {
      const failure = new McpTransportError(
        `${this.endpointLabel} answered HTTP ${challenge.status} with a challenge the auth provider refused: ${this.secrets.redact((error as Error).message)}`,
        false,
        challenge.status,
      );
      failure.cause = error;
      throw failure;
    }
  }

  /** Builds the headers of one request. */
  headers(
    request: Pick<HttpWireRequest, 'method' | 'session' | 'lastEventId' | 'extraHeaders'>,
    bearer: string | null = this.options.bearerToken,
  ): Headers {
    const headers = new Headers(this.options.headers);
    if (bearer) headers.set('Authorization', `Bearer ${bearer}`);
    if (request.method === 'POST') {
      headers.set('Accept', 'application/json, text/event-stream');
      headers.set('Content-Type', 'application/json');
    } else if (request.method === 'GET') {
      headers.set('Accept', 'text/event-stream');
    }
    if (request.session?.id) headers.set(McpHeader.SessionId, request.session.id);
    if (request.session?.protocolVersion) headers.set(McpHeader.ProtocolVersion, request.session.protocolVersion);
    if (request.lastEventId) headers.set('Last-Event-ID', request.lastEventId);
    for (const [name, value] of Object.entries(request.extraHeaders ?? {})) headers.set(name, value);
    // The active span's trace context (the exchange's CLIENT span): nothing without an SDK.
    injectHttpHeaders(headers);
    return headers;
  }

  /**
   * Sends one request. Rejects with `HttpSendFailure` when no response arrives; an abort of
   * `signal` rejects with the signal's reason.
   */
  async send(request: HttpWireRequest): Promise<Response> {
    const bearer = request.bearer !== undefined ? request.bearer : await this.bearer();
    try {
      return await fetch(this.options.url, {
        method: request.method,
        headers: this.headers(request, bearer),
        body: request.body,
        signal: request.signal,
        redirect: 'manual',
      });
    } catch (error) {
      if (request.signal.aborted) throw error;
      throw toSendFailure(error, false);
    }
  }
}
