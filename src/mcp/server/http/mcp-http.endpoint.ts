import { httpHeadersOf } from '../config/limit-exceeded.errors';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import type { McpEventInput, McpEventSink } from '../../persistence/interfaces/mcp-event-sink.interface';
import type { McpInboundSessionRecord } from '../../persistence/interfaces/mcp-session-store.interface';
import { JsonText } from '../../persistence/json-text';
import { InjectMcpEventSink } from '../../persistence/mcp-persistence.constants';
import {
  parseJsonRpc,
  type ClassifiedMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc';
import { McpHeader, McpMethod } from '../../protocol/mcp-methods';
import { SESSION_PROTOCOL_VERSIONS, isSupportedSessionVersion } from '../../protocol/revisions';
import { McpSessionBus } from '../sessions/mcp-session-bus';
import { exchangeOutcome, sessionEvent } from '../sessions/session-events';
import { McpCachedSessionStore } from '../sessions/mcp-cached-session.store';
import { Toolset } from '../dispatch/toolset';
import { MCP_RAW_BODY, type McpRequest } from './mcp-body-reader';
import { acceptsJson, headerValue, isJsonContentType } from './mcp-http-checks';
import {
  SESSION_NOT_FOUND_CODE,
  TRANSPORT_ERROR_CODE,
  sendDraining,
  sendEmpty,
  sendJson,
  sendJsonText,
  sendLimitExceeded,
  sendRpcError,
} from '../responses/mcp-http-responses';
import { McpDrainService } from '../shutdown/mcp-drain.service';
import { abortedAtShutdown } from '../shutdown/shutdown-answers';
import type { McpSessionChannelSettings } from './mcp-session-channel';
import { McpPendingClientRequests } from '../sessions/mcp-session-channel-pending';
import { parseEventId } from '../sessions/mcp-sse-writer';
import { McpStreamEndpoint } from './mcp-stream.endpoint';
import { McpStatelessEndpoint } from './mcp-stateless.endpoint';
import { McpStreamRegistry, SESSION_STREAM_ID } from '../sessions/mcp-stream-registry';
import type { McpEventLog } from '../pubsub/mcp-event-log.interface';
import { context as otelContext } from '@opentelemetry/api';
import { contextWithExchange, mcpTelemetryActive } from '../../telemetry/mcp-spans';
import { SourcedDelivery } from '../pipeline/lazy-abort';
import { McpHttpExchange } from './mcp-http-exchange';
import { McpAttr } from '../../telemetry/mcp-telemetry.constants';
import { SESSION_END_SPAN, startInboundSpan, startSessionHttpSpan, STREAM_OPEN_SPAN } from './mcp-inbound-span';
import { MCP_EVENT_LOG } from '../pubsub/mcp-pubsub.providers';

/** What a stage returns once it answered the request itself: nothing left to wait for. */
const ANSWERED: Promise<void> = Promise.resolve();

/** A parsed body together with the text it was parsed from (stored as is in the event row). */
type ReadBody = { classified: ClassifiedMessage; text: string };

function asRecord(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/**
 * The Streamable HTTP transport of one mount (session revisions): checks the request, finds or
 * opens the session, hands the message to the toolset and writes the audit row before the
 * response leaves. A request whose handler talks back to the client (progress, log messages,
 * elicitation...) is answered with an SSE stream; the client's answers and cancellations go
 * through the session bus to the replica running the call.
 */
@Injectable()
export class McpHttpEndpoint {
  private readonly channelSettings: McpSessionChannelSettings;
  private readonly logger: Logger;

  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly toolset: Toolset,
    private readonly sessions: McpCachedSessionStore,
    @InjectMcpEventSink() private readonly events: McpEventSink,
    private readonly bus: McpSessionBus,
    private readonly streams: McpStreamEndpoint,
    private readonly stateless: McpStatelessEndpoint,
    pending: McpPendingClientRequests,
    private readonly registry: McpStreamRegistry,
    @Inject(MCP_EVENT_LOG) private readonly log: McpEventLog,
    private readonly drain: McpDrainService,
  ) {
    this.logger = new Logger(`McpHttpEndpoint:${options.mount}`);
    drain.register(options.mount, options.shutdown.drainTimeoutMs, options.shutdown.quietPeriodMs);
    this.channelSettings = {
      pending,
      retryMs: options.streams.retryMs,
      clientRequestTimeoutMs: options.streams.clientRequestTimeoutMs,
      maxBufferedBytes: options.streams.maxBufferedBytes,
      log,
      onLogError: (error) =>
        this.logger.warn(`A stream event could not be kept for resumption: ${(error as Error)?.message ?? error}`),
    };
  }

  /**
   * Handles a POST carrying one JSON-RPC message: checks its headers, parses it and builds its
   * exchange, which every stage after this one gets. Fails by rejecting, never by throwing.
   */
  post(req: McpRequest, res: ServerResponse): Promise<void> {
    try {
      return this.accept(req, res);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private accept(req: McpRequest, res: ServerResponse): Promise<void> {
    if (!isJsonContentType(headerValue(req.headers, 'content-type'))) {
      sendRpcError(res, 415, TRANSPORT_ERROR_CODE, 'Unsupported Media Type: Content-Type must be application/json');
      return ANSWERED;
    }
    const accept = headerValue(req.headers, 'accept');
    if (!acceptsJson(accept)) {
      sendRpcError(res, 406, TRANSPORT_ERROR_CODE, 'Not Acceptable: the Accept header must include application/json');
      return ANSWERED;
    }
    const body = this.readMessage(req, res);
    if (!body) return ANSWERED;
    const { classified, text } = body;
    if (classified.kind === 'invalid') {
      sendJson(res, 400, classified.error);
      return ANSWERED;
    }
    const exchange = new McpHttpExchange(req.headers, req.user as McpPrincipal | undefined, accept, classified, text);
    // Nothing records spans, metrics or trace context: no span, no context, no wrapping.
    if (!mcpTelemetryActive()) return this.admit(exchange, res);
    return this.admitInSpan(req, exchange, res);
  }

  /** `admit`, inside the exchange's SERVER span and its trace context. */
  private async admitInSpan(req: McpRequest, exchange: McpHttpExchange, res: ServerResponse): Promise<void> {
    const span = startInboundSpan(
      exchange.classified.message,
      req.headers,
      this.options.mount,
      this.options.telemetry,
      this.clientAddressOf(req),
      exchange,
    );
    exchange.span = span;
    try {
      // The handling runs in the span's context: a tool's own outbound calls continue the trace.
      // `admit` is passed with `this` and its arguments: no closure per request.
      // eslint-disable-next-line @typescript-eslint/unbound-method -- called with `this` as thisArg
      await otelContext.with(contextWithExchange(span), this.admit, this, exchange, res);
    } catch (error) {
      span.end({ error });
      throw error;
    } finally {
      // An answer no audit row describes (a refusal before the exchange): its HTTP status tells.
      if (!span.hasOutcome) span.note({ status: res.statusCode });
      span.end();
    }
  }

  /** While draining, new requests are refused; notifications and answers still reach the calls in flight. */
  private async admit(exchange: McpHttpExchange, res: ServerResponse): Promise<void> {
    const { classified } = exchange;
    if (classified.kind !== 'request') return await this.route(exchange, res);
    if (this.drain.draining) return await this.refuseWhileDraining(res, classified.message.id);
    // The drain deadline aborts the exchange's own abort source: no signal of its own.
    const inFlight = this.drain.enter(this.options.mount, exchange.abort);
    exchange.inFlight = inFlight;
    try {
      await this.route(exchange, res);
    } finally {
      inFlight.leave();
    }
  }

  /**
   * Sends the message where it goes: the stateless revision, an initialize, or its session. A
   * session held in memory is joined without waiting: only a session read from the store costs
   * an await.
   */
  private route(exchange: McpHttpExchange, res: ServerResponse): Promise<void> {
    if (this.stateless.accepts(exchange)) return this.stateless.serve(exchange, res);
    const { classified } = exchange;
    if (classified.kind === 'request' && classified.message.method === McpMethod.Initialize) {
      return this.initialize(classified.message, exchange, res);
    }
    const sessionId = this.sessionIdOf(exchange.sessionIdHeader, exchange.protocolVersionHeader, res);
    if (sessionId === null) return ANSWERED;
    const held = this.sessions.held(sessionId, exchange.principal);
    if (held) {
      exchange.joined(held);
      return this.exchange(exchange, held, res);
    }
    return this.routeToStoredSession(exchange, sessionId, res);
  }

  private async routeToStoredSession(exchange: McpHttpExchange, sessionId: string, res: ServerResponse): Promise<void> {
    const session = await this.storedSession(sessionId, exchange.principal, res);
    if (!session) return;
    exchange.joined(session);
    await this.exchange(exchange, session, res);
  }

  /**
   * Handles a GET asking for an event stream: opens the session's standalone stream, or resumes
   * one after `Last-Event-ID` (refused with 503 while draining). Its SERVER span covers the
   * decision only and ends once the stream is open or refused: a stream may last hours.
   */
  async get(req: McpRequest, res: ServerResponse): Promise<void> {
    const lastEventId = headerValue(req.headers, 'last-event-id');
    const resume = parseEventId(lastEventId);
    const span = startSessionHttpSpan(
      STREAM_OPEN_SPAN,
      'GET',
      req.headers,
      this.options.mount,
      this.clientAddressOf(req),
      {
        [McpAttr.StreamResumed]: lastEventId !== undefined,
        [McpAttr.StreamKind]: resume && resume.streamId !== SESSION_STREAM_ID ? 'request' : 'session',
      },
    );
    try {
      if (this.drain.draining) return await this.refuseWhileDraining(res, null);
      const session = await otelContext.with(span.context, () => this.requireSessionOf(req, res));
      // Opened outside the span's context: the stream's keep-alives outlive the span and belong to no trace.
      if (session) await this.streams.open(session, res, lastEventId);
    } catch (error) {
      span.end(null, error);
      throw error;
    } finally {
      span.end(res.headersSent ? res.statusCode : null);
    }
  }

  /** Handles a DELETE: terminates the caller's session (its SERVER span and audit row carry the caller's trace). */
  async delete(req: McpRequest, res: ServerResponse): Promise<void> {
    const span = startSessionHttpSpan(
      SESSION_END_SPAN,
      'DELETE',
      req.headers,
      this.options.mount,
      this.clientAddressOf(req),
    );
    try {
      await otelContext.with(span.context, () => this.endSession(req, res));
    } catch (error) {
      span.end(null, error);
      throw error;
    } finally {
      span.end(res.headersSent ? res.statusCode : null);
    }
  }

  private async endSession(req: McpRequest, res: ServerResponse): Promise<void> {
    const startedAt = new Date();
    const session = await this.requireSessionOf(req, res);
    if (!session) return;
    await this.sessions.terminate(session);
    await this.bus.endSession(session.sessionId);
    await this.log.forget(session.sessionId, SESSION_STREAM_ID);
    await this.events.record(this.event(session, startedAt, { kind: 'terminate', status: 204 }));
    sendEmpty(res, 204);
  }

  private clientAddressOf(req: McpRequest): string | undefined {
    return (req as { socket?: { remoteAddress?: string } }).socket?.remoteAddress;
  }

  private async refuseWhileDraining(res: ServerResponse, id: JsonRpcRequest['id'] | null): Promise<void> {
    this.drain.refused();
    await this.drain.beforeRefusing();
    sendDraining(res, this.options.shutdown.retryAfterMs, id);
  }

  private readMessage(req: McpRequest, res: ServerResponse): ReadBody | null {
    const raw = req[MCP_RAW_BODY];
    if (raw && !raw.ok) {
      res.destroy(); // the client went away mid-body: nobody to answer
      return null;
    }
    const text = raw ? raw.text : JSON.stringify(req.body ?? null);
    return { classified: parseJsonRpc(text), text };
  }

  /** The caller's session of a GET or DELETE (answered with the error when there is none). */
  private requireSessionOf(req: McpRequest, res: ServerResponse): Promise<McpInboundSessionRecord | null> {
    return this.requireSession(
      headerValue(req.headers, McpHeader.SessionId),
      headerValue(req.headers, McpHeader.ProtocolVersion),
      req.user as McpPrincipal,
      res,
    );
  }

  /** The session `sessionId` names, of `principal` (answered with the error when there is none). */
  private async requireSession(
    sessionId: string | undefined,
    version: string | undefined,
    principal: McpPrincipal,
    res: ServerResponse,
  ): Promise<McpInboundSessionRecord | null> {
    const checked = this.sessionIdOf(sessionId, version, res);
    return checked === null ? null : this.storedSession(checked, principal, res);
  }

  /** The session id of a request whose session headers are sound; null once the error is answered. */
  private sessionIdOf(sessionId: string | undefined, version: string | undefined, res: ServerResponse): string | null {
    if (!sessionId) {
      sendRpcError(
        res,
        400,
        TRANSPORT_ERROR_CODE,
        'Bad Request: the Mcp-Session-Id header is required (send initialize first)',
      );
      return null;
    }
    if (version !== undefined && !isSupportedSessionVersion(version)) {
      sendRpcError(
        res,
        400,
        TRANSPORT_ERROR_CODE,
        `Bad Request: unsupported MCP-Protocol-Version "${String(version)}" (supported: ${SESSION_PROTOCOL_VERSIONS.join(', ')})`,
      );
      return null;
    }
    return sessionId;
  }

  /** The session from memory or the store (answered with 404 when there is none). */
  private async storedSession(
    sessionId: string,
    principal: McpPrincipal,
    res: ServerResponse,
  ): Promise<McpInboundSessionRecord | null> {
    const session = await this.sessions.find(sessionId, principal);
    if (!session) {
      // The session may just have been found idle (and ended): close what its owner still holds
      // on any replica. Only streams of this principal are touched, so a stranger's guess closes nothing.
      this.bus
        .endSession(sessionId, principal.key)
        .catch((error) =>
          this.logger.warn(`Could not spread the end of a session: ${(error as Error)?.message ?? error}`),
        );
      sendRpcError(res, 404, SESSION_NOT_FOUND_CODE, 'Session not found');
    }
    return session;
  }

  private async initialize(request: JsonRpcRequest, exchange: McpHttpExchange, res: ServerResponse): Promise<void> {
    const { principal, span } = exchange;
    const max = this.options.limits.sessionsPerPrincipal;
    // Counted in the database: the cap holds across replicas (two initializes racing at the cap may both pass).
    if ((await this.sessions.countOpen(principal)) >= max) {
      return sendLimitExceeded(
        res,
        'sessionsPerPrincipal',
        max,
        `Too many open sessions: this principal already holds ${max}. DELETE a session you no longer use, or wait for idle ones to expire`,
        request.id,
      );
    }
    const requestedVersion = request.params?.protocolVersion;
    const context = {
      principal,
      sessionId: null,
      protocolVersion: isSupportedSessionVersion(requestedVersion) ? requestedVersion : SESSION_PROTOCOL_VERSIONS[0],
    };
    const response = await this.toolset.deliver(request, context);
    const result = response && 'result' in response ? response.result : null;
    if (!result) {
      span?.note({ errorCode: response && 'error' in response ? response.error.code : null, response });
      return sendJson(res, 200, response);
    }
    const session = await this.sessions.open({
      principal,
      protocolVersion: String(result.protocolVersion),
      clientInfo: asRecord(request.params?.clientInfo),
      clientCapabilities: asRecord(request.params?.capabilities),
    });
    const json = JSON.stringify(response);
    span?.setSessionId(session.sessionId);
    span?.set({ [McpAttr.ProtocolVersion]: session.protocolVersion });
    await this.events.record(
      exchange.sessionRow(this.options.mount, session, { response: new JsonText(json), status: 200 }),
    );
    sendJsonText(res, 200, json, { 'Mcp-Session-Id': session.sessionId });
  }

  /**
   * One message of a session: delivered to the toolset with the exchange's abort source (a client
   * that goes away, the drain deadline and the end of the session abort it), forwarded on the
   * session bus, audited, then answered (as JSON, or as the SSE stream it became).
   */
  private async exchange(
    exchange: McpHttpExchange,
    session: McpInboundSessionRecord,
    res: ServerResponse,
  ): Promise<void> {
    const { classified, span } = exchange;
    const message = classified.message;
    span?.set({ [McpAttr.ProtocolVersion]: session.protocolVersion });
    exchange.watch(res);
    this.registry.trackRequest(session.sessionId, exchange);
    let response: JsonRpcResponse | null;
    try {
      response = await abortedAtShutdown(
        exchange.inFlight,
        message,
        this.toolset.deliver(message, this.deliveryOf(exchange, session, res)),
      );
      // A request is answered here; a client's answer or cancellation may be for another replica.
      if (classified.kind !== 'request') await this.bus.forward(classified.kind, message, session);
    } catch (error) {
      await this.events
        .record(
          exchange.sessionRow(this.options.mount, session, {
            status: 500,
            note: `Internal error: ${(error as Error)?.message ?? String(error)}`,
          }),
        )
        .catch(() => undefined);
      throw error;
    } finally {
      exchange.unwatch(res);
      this.registry.untrackRequest(exchange);
    }
    const json = response ? JSON.stringify(response) : null;
    const channel = exchange.channel;
    // An exceeded cap found by a handler (tasksPerPrincipal) is a 429, unless the stream already began.
    const outcome = exchangeOutcome(response, json, {
      shutdown: exchange.deadlineFired,
      streaming: !!channel?.streaming,
    });
    await this.events.record(exchange.sessionRow(this.options.mount, session, outcome));
    if (channel?.streaming) channel.finish(json ?? '');
    else if (json !== null) sendJsonText(res, outcome.status, json, httpHeadersOf(response));
    else sendEmpty(res, 202);
  }

  /**
   * What the toolset gets of a session message: its abort source, and for a request whose client
   * accepts an SSE answer, the way back to the client (made when the handler first uses it).
   */
  private deliveryOf(exchange: McpHttpExchange, session: McpInboundSessionRecord, res: ServerResponse) {
    const context = new SourcedDelivery(
      {
        principal: exchange.principal,
        sessionId: session.sessionId,
        protocolVersion: session.protocolVersion,
        clientCapabilities: session.clientCapabilities,
        logLevel: session.logLevel,
      },
      exchange.abort,
    );
    return exchange.classified.kind === 'request' && exchange.acceptsEventStream
      ? exchange.offerChannel(context, res, this.channelSettings)
      : context;
  }

  /** The audit row of a DELETE (its span is the HTTP request's own, which notes no outcome). */
  private event(
    session: McpInboundSessionRecord,
    startedAt: Date,
    fields: Partial<McpEventInput> & Pick<McpEventInput, 'kind'>,
  ): McpEventInput {
    return sessionEvent(this.options.mount, session, startedAt, fields);
  }
}
