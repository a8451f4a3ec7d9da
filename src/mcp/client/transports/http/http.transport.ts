import { McpClientError, McpProtocolError, McpTransportError } from '../../../errors/mcp-client.errors';
import type { JsonRpcNotification, JsonRpcRequest } from '../../../protocol/jsonrpc';
import { McpMethod } from '../../../protocol/mcp-methods';
import { STATELESS_PROTOCOL_VERSION } from '../../../protocol/stateless';
import { routingHeaders } from '../../stateless/stateless-request';
import { HttpCall } from './http-call';
import { abortableDelay, backoffDelay, isIdempotent, isRetryableStatus } from './http-delivery-policy';
import { exchangeMessage, type HttpExchangeOutcome } from './http-exchange';
import {
  INITIALIZED_NOTIFICATION,
  handshakeFromResponse,
  initializeRequest,
  sessionFromHandshake,
} from './http-handshake';
import { parseBearerChallenge } from '../../auth/bearer-challenge.parser';
import { discardBody, readBodyPrefix } from './http-body-prefix';
import { excerpt } from './raw-recorder';
import { HttpSessionExpiredError } from './http-session-expired.errors';
import { HttpStandaloneStreams } from './http-standalone-stream';
import { HttpSendFailure, HttpWire, type HttpSession } from './http-wire';
import {
  resolveHttpTransportOptions,
  type HttpTransportOptions,
  type ResolvedHttpTransportOptions,
} from './http.options';
import type {
  McpHandshakeInfo,
  McpTransport,
  McpTransportContext,
  McpTransportDeliverOptions,
  McpTransportResult,
} from '../mcp-transport.interface';

/** The least time a cancel notice gets, whatever the call's own deadline, in ms. */
const CANCEL_NOTICE_FLOOR_MS = 1000;

type Message = JsonRpcRequest | JsonRpcNotification;

/**
 * Streamable HTTP client transport: 2025 session revisions, and stateless 2026-07-28 requests
 * when `deliver` is asked for `stateless` (no handshake, no session, routing headers).
 *
 * - POSTs each message with `Accept: application/json, text/event-stream`; reads a JSON body or
 *   an SSE stream, answering server->client requests found on it and passing notifications on.
 * - While a request of a session is in flight, also listens on the session's standalone GET
 *   stream and answers the server requests found there the same way (405: the endpoint has none).
 * - Opens the session itself when `deliver` gets `sessionId: null` for anything but
 *   `initialize` (initialize, then notifications/initialized), and reports the new session id
 *   and `handshake` in the result; later requests echo `Mcp-Session-Id` and
 *   `MCP-Protocol-Version`.
 * - On 404 for a known session it opens a new session once and re-sends idempotent requests;
 *   `tools/call` is never re-sent: it rejects with `HttpSessionExpiredError` (delivered false).
 * - Retries connection failures, 429 and 5xx with backoff for idempotent messages; `tools/call`
 *   is retried only when the connection was refused before anything was written.
 * - A timeout or an abort stops the call and POSTs `notifications/cancelled` for a request that
 *   was sent.
 *
 * A JSON-RPC error response is not thrown: it is returned as `body` (with its HTTP status), like
 * a success, so the caller maps it to `McpServerError` in one place for every transport.
 */
export class HttpTransport implements McpTransport {
  private readonly options: ResolvedHttpTransportOptions;
  private readonly wire: HttpWire;
  private readonly standalone: HttpStandaloneStreams;

  constructor(options: HttpTransportOptions) {
    this.options = resolveHttpTransportOptions(options);
    this.wire = new HttpWire(this.options);
    this.standalone = new HttpStandaloneStreams(this.wire, this.options.maxEventChars);
  }

  /** Sends one request or notification; see the class comment for the rules. */
  async deliver(
    message: JsonRpcRequest | JsonRpcNotification,
    options: McpTransportDeliverOptions,
  ): Promise<McpTransportResult> {
    const call = new HttpCall(options.context);
    try {
      return await this.run(message, options, call);
    } catch (error) {
      if (!call.stopped) throw error;
      // A stateless request is cancelled by closing its response stream, which the abort did.
      if (!options.stateless) await this.sendCancelNotice(message, call);
      throw call.stopError();
    } finally {
      call.dispose();
    }
  }

  /** Ends a remote session with DELETE; 404 (already gone) and 405 (not supported) are fine. */
  async closeSession(sessionId: string, context: McpTransportContext): Promise<void> {
    const call = new HttpCall(context);
    try {
      const response = await this.wire.send({
        method: 'DELETE',
        session: { id: sessionId, protocolVersion: null },
        signal: call.signal,
      });
      if (response.ok || response.status === 404 || response.status === 405) return void (await discardBody(response));
      const text = await readBodyPrefix(response);
      const detail = text.trim() ? `: ${excerpt(this.wire.secrets.redact(text))}` : '';
      throw new McpTransportError(
        `${this.where(context, 'DELETE')} answered HTTP ${response.status}${detail}`,
        true,
        response.status,
      );
    } catch (error) {
      if (call.stopped) throw call.stopError();
      if (error instanceof HttpSendFailure)
        throw new McpTransportError(
          `${this.where(context, 'DELETE')} could not be reached: ${error.message}`,
          !error.notSent,
        );
      throw error;
    } finally {
      call.dispose();
    }
  }

  private async run(
    message: Message,
    options: McpTransportDeliverOptions,
    call: HttpCall,
  ): Promise<McpTransportResult> {
    if (options.stateless)
      return this.runStateless(message, options.protocolVersion ?? STATELESS_PROTOCOL_VERSION, call, options.headers);
    const isInitialize = 'id' in message && message.method === McpMethod.Initialize;
    let session: HttpSession | null = options.sessionId
      ? { id: options.sessionId, protocolVersion: options.protocolVersion ?? null }
      : null;
    let handshake: McpHandshakeInfo | undefined;
    if (!session && !isInitialize) ({ session, handshake } = await this.openSession(call));
    if (handshake) call.context.onHandshake?.(handshake);
    let outcome = await this.sendListening(message, session, call);
    if (outcome.kind === 'http-error' && outcome.status === 404 && session?.id && !handshake) {
      if (!isIdempotent(message)) throw new HttpSessionExpiredError(call.context.server, message.method, session.id);
      ({ session, handshake } = await this.openSession(call));
      call.context.onHandshake?.(handshake);
      outcome = await this.sendListening(message, session, call);
    }
    if (outcome.kind === 'http-error') throw this.httpError(outcome, call, call.maybeDelivered);
    const result: McpTransportResult = {
      body: outcome.kind === 'response' ? outcome.body : null,
      sessionId: isInitialize ? outcome.sessionId : (session?.id ?? null),
      rawRequest: JSON.stringify(message),
      rawResponse: outcome.raw,
      status: outcome.status,
      stderr: '',
    };
    if (isInitialize && outcome.kind === 'response' && 'result' in outcome.body)
      handshake = this.tryHandshake(call, outcome.body.result);
    if (handshake) result.handshake = handshake;
    return result;
  }

  /**
   * Sends a request of a session while listening on the session's standalone GET stream, where
   * a server may send the requests it makes during the call (e.g. `elicitation/create`).
   */
  private async sendListening(
    message: Message,
    session: HttpSession | null,
    call: HttpCall,
  ): Promise<HttpExchangeOutcome> {
    if (!session?.id || !('id' in message)) return this.send(message, session, call, true);
    const stop = await this.standalone.listen(session, call);
    try {
      return await this.send(message, session, call, true);
    } finally {
      stop();
    }
  }

  /** One stateless request: no handshake, no session id, the routing headers and the caller's (`Mcp-Param-*`). */
  private async runStateless(
    message: Message,
    protocolVersion: string,
    call: HttpCall,
    headers: Record<string, string> = {},
  ): Promise<McpTransportResult> {
    const session: HttpSession = { id: null, protocolVersion };
    const outcome = await this.send(message, session, call, true, {
      ...headers,
      ...routingHeaders(message, protocolVersion),
    });
    if (outcome.kind === 'http-error') throw this.httpError(outcome, call, call.maybeDelivered);
    const body = outcome.kind === 'response' ? outcome.body : null;
    return {
      body,
      sessionId: null,
      rawRequest: JSON.stringify(message),
      rawResponse: outcome.raw,
      status: outcome.status,
      stderr: '',
    };
  }

  /** initialize + notifications/initialized. Failures here never mean the message was delivered. */
  private async openSession(call: HttpCall): Promise<{ session: HttpSession; handshake: McpHandshakeInfo }> {
    try {
      const outcome = await this.send(initializeRequest(this.options), null, call, false);
      if (outcome.kind !== 'response') throw this.httpError(outcome, call, false);
      const handshake = handshakeFromResponse(call.context.server, outcome.body);
      const session = sessionFromHandshake(outcome.sessionId, handshake);
      const ack = await this.send(INITIALIZED_NOTIFICATION, session, call, false);
      if (ack.kind === 'http-error') throw this.httpError(ack, call, false);
      return { session, handshake };
    } catch (error) {
      if (call.stopped || !(error instanceof McpClientError) || !error.delivered) throw error;
      if (error instanceof McpProtocolError) throw new McpProtocolError(error.message, false);
      const copy = new McpTransportError(
        error.message,
        false,
        error instanceof McpTransportError ? error.status : undefined,
      );
      if (error.cause !== undefined) copy.cause = error.cause;
      throw copy;
    }
  }

  /** One message, with the retries the delivery policy allows. `counts` is false for handshake messages. */
  private async send(
    message: Message,
    session: HttpSession | null,
    call: HttpCall,
    counts: boolean,
    statelessHeaders?: Record<string, string>,
  ): Promise<HttpExchangeOutcome> {
    const { maxRawResponseLength, maxStreamResumptions, maxResponseBytes, maxEventChars } = this.options;
    const ctx = {
      wire: this.wire,
      call,
      maxRawResponseLength,
      maxStreamResumptions,
      maxResponseBytes,
      maxEventChars,
      statelessHeaders,
    };
    const reauthorized = new Set<number>();
    for (let attempt = 0; ; attempt++) {
      const before = call.maybeDelivered;
      if (counts) {
        call.maybeDelivered = true;
        call.session = session;
      }
      let outcome: HttpExchangeOutcome;
      try {
        outcome = await exchangeMessage(message, session, ctx);
      } catch (error) {
        if (!(error instanceof HttpSendFailure) || call.stopped) throw error;
        if (counts && error.notSent) call.maybeDelivered = before;
        if (attempt >= this.options.retries || !(error.notSent || isIdempotent(message))) {
          throw new McpTransportError(
            `${this.where(call.context, 'POST')} could not be reached: ${error.message}`,
            counts && call.maybeDelivered,
          );
        }
        await abortableDelay(backoffDelay(attempt, this.options), call.signal);
        continue;
      }
      // A 4xx is a refusal of this attempt: it did not deliver the message.
      if (counts && outcome.kind === 'http-error' && outcome.status < 500) call.maybeDelivered = before;
      // Even a tools/call is sent again here: a 401 or 403 is the bearer guard refusing the
      // request before any tool ran, so the call was not executed and at-most-once still holds.
      if (outcome.kind === 'http-error' && (await this.reauthorize(outcome, reauthorized, call))) continue;
      if (
        outcome.kind !== 'http-error' ||
        !isRetryableStatus(outcome.status) ||
        !isIdempotent(message) ||
        attempt >= this.options.retries
      )
        return outcome;
      await abortableDelay(backoffDelay(attempt, this.options), call.signal);
    }
  }

  /**
   * After a 401, or a 403 `insufficient_scope`, of a request that carried a provider's token:
   * invalidates it and says whether a different token is now there to try, once per status.
   */
  private async reauthorize(
    outcome: Extract<HttpExchangeOutcome, { kind: 'http-error' }>,
    done: Set<number>,
    call: HttpCall,
  ): Promise<boolean> {
    const status = outcome.status;
    if ((status !== 401 && status !== 403) || done.has(status) || !outcome.bearer || !this.wire.refreshable)
      return false;
    const challenge = parseBearerChallenge(status, outcome.challenge ?? null);
    if (status === 403 && challenge.error !== 'insufficient_scope') return false;
    done.add(status);
    await this.wire.invalidate(outcome.bearer, challenge, call.context);
    return (await this.wire.bearer(call.context)) !== outcome.bearer;
  }

  private httpError(
    outcome: Exclude<HttpExchangeOutcome, { kind: 'response' }>,
    call: HttpCall,
    delivered: boolean,
  ): McpTransportError {
    const where = this.where(call.context, 'POST');
    if (outcome.kind === 'accepted')
      return new McpTransportError(`${where} accepted a request without answering it`, delivered, outcome.status);
    const detail = outcome.detail ? `: ${excerpt(outcome.detail)}` : '';
    const status = outcome.status;
    if (status === 401 || status === 403) {
      return new McpTransportError(
        `${where} refused the credentials: HTTP ${status}${detail}. Check the bearer token or headers of this server.`,
        false,
        status,
      );
    }
    return new McpTransportError(
      `${where} answered HTTP ${status}${detail}`,
      status >= 500 ? delivered : false,
      status,
    );
  }

  private tryHandshake(call: HttpCall, result: Record<string, unknown>): McpHandshakeInfo | undefined {
    try {
      return handshakeFromResponse(call.context.server, { jsonrpc: '2.0', id: 0, result });
    } catch {
      return undefined;
    }
  }

  /** Best effort: a failed notice changes nothing about the error the caller gets. */
  private async sendCancelNotice(message: Message, call: HttpCall): Promise<void> {
    if (!('id' in message) || message.method === McpMethod.Initialize || !call.maybeDelivered) return;
    const notice: JsonRpcNotification = {
      jsonrpc: '2.0',
      method: McpMethod.Cancelled,
      params: { requestId: message.id, reason: call.cancelReason() },
    };
    let failure: unknown;
    try {
      // The caller hears of the timeout only once the notice is over: bounding the notice by the
      // call's own deadline (but never under a second, so that a loopback notice of a short call
      // still gets its answer) keeps a short call short against a server that stopped answering.
      const own = call.context.timeoutMs;
      const bound =
        Number.isFinite(own) && own > 0
          ? Math.min(Math.max(own, CANCEL_NOTICE_FLOOR_MS), this.options.cancelNoticeTimeoutMs)
          : this.options.cancelNoticeTimeoutMs;
      const signal = AbortSignal.timeout(bound);
      const response = await this.wire.send({
        method: 'POST',
        session: call.session,
        signal,
        body: JSON.stringify(notice),
      });
      await discardBody(response);
      if (!response.ok)
        failure = new McpTransportError(
          `${this.where(call.context, 'POST')} answered the cancel notice with HTTP ${response.status}`,
          true,
          response.status,
        );
    } catch (error) {
      // Not thrown; see above. The notice's audit row tells it.
      failure = error;
    }
    try {
      call.context.onCancelNotice?.(notice, failure);
    } catch {
      // An observer cannot change the call's outcome.
    }
  }

  private where(context: McpTransportContext, method: string): string {
    return `MCP server "${context.server}" (${method} ${this.wire.endpointLabel})`;
  }
}
