import type { Logger } from '@nestjs/common';
import type { McpClientChannel } from '../../interfaces/mcp-delivery.interface';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import type { McpEventInput, McpEventSink } from '../../persistence/interfaces/mcp-event-sink.interface';
import type {
  McpInboundSessionRecord,
  McpNewInboundSession,
} from '../../persistence/interfaces/mcp-session-store.interface';
import { JsonText } from '../../persistence/json-text';
import {
  JsonRpcErrorCode,
  classifyJsonRpc,
  jsonRpcError,
  type ClassifiedMessage,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import type { NdjsonLine } from '../../protocol/ndjson';
import { SESSION_PROTOCOL_VERSIONS, isSupportedSessionVersion } from '../../protocol/revisions';
import { STATELESS_PROTOCOL_VERSIONS, StatelessMetaKey, envelopeVersionOf } from '../../protocol/stateless';
import type { McpResolvedOptions } from '../config/mcp.options';
import type { Toolset } from '../dispatch/toolset';
import type { McpEventLog } from '../pubsub/mcp-event-log.interface';
import { SESSION_NOT_FOUND_CODE, TRANSPORT_ERROR_CODE } from '../responses/mcp-http-responses';
import type { McpCachedSessionStore } from '../sessions/mcp-cached-session.store';
import type { McpSessionBus } from '../sessions/mcp-session-bus';
import type { McpPendingClientRequests } from '../sessions/mcp-session-channel-pending';
import { SESSION_STREAM_ID, type McpOpenStream, type McpStreamRegistry } from '../sessions/mcp-stream-registry';
import { exchangeOutcome, sessionEvent } from '../sessions/session-events';
import type { McpDrainService, McpInFlightRequest } from '../shutdown/mcp-drain.service';
import { abortedAtShutdown } from '../shutdown/shutdown-answers';
import { LazyAbort, SourcedDelivery } from '../pipeline/lazy-abort';
import { McpStdioStateless, type McpStdioStatelessParts } from './stdio-stateless';
import { context as otelContext } from '@opentelemetry/api';
import { contextWithExchange, currentExchange, mcpTelemetryActive, startExchangeSpan } from '../../telemetry/mcp-spans';
import { McpAttr } from '../../telemetry/mcp-telemetry.constants';
import { extractInboundContext } from '../../telemetry/trace-carriers';
import { noteInboundOutcome } from '../http/mcp-inbound-span';

/** What a stdio connection is served by: the mount's own parts, the ones its HTTP endpoint uses. */
export interface McpStdioParts {
  options: McpResolvedOptions;
  toolset: Toolset;
  sessions: McpCachedSessionStore;
  events: McpEventSink;
  bus: McpSessionBus;
  pending: McpPendingClientRequests;
  registry: McpStreamRegistry;
  log: McpEventLog;
  drain: McpDrainService;
  logger: Logger;
  stateless: McpStdioStatelessParts;
}

type Exchange = Exclude<ClassifiedMessage, { kind: 'invalid' }>;

/**
 * One client on stdin/stdout: one 2025 session, opened by its `initialize` and ended with the
 * connection, and beside it the requests of the stateless revision (2026-07-28), which carry
 * their revision in `_meta` and are served without the session (`McpStdioStateless`). Messages are handled side by side, as HTTP handles concurrent POSTs: a tool that
 * waits for an elicitation answer must not hold up the line that carries the answer. What a
 * handler sends before its response (progress, log messages, server->client requests) and what
 * the session is told later (list changes, resource updates) is written as frames of its own.
 */
export class McpStdioConnection {
  private session: McpInboundSessionRecord | null = null;
  /** Set while `initialize` runs: the messages that follow wait for its session. */
  private opening: Promise<void> | null = null;
  private readonly handling = new Set<Promise<void>>();
  private stream: McpOpenStream | null = null;
  private ended = false;
  /** What the client's `initialize` said, for a session opened again after its idle expiry. */
  private hello: McpNewInboundSession | null = null;
  /** Set while a session found idle is replaced: the messages that meet it share the new one. */
  private renewing: Promise<McpInboundSessionRecord> | null = null;
  private readonly stateless: McpStdioStateless;

  constructor(
    private readonly parts: McpStdioParts,
    private readonly principal: McpPrincipal,
    private readonly send: (json: string) => void,
  ) {
    this.stateless = new McpStdioStateless(parts.stateless, principal, send);
  }

  /** The session the connection opened, once `initialize` succeeded. */
  get sessionId(): string | null {
    return this.session?.sessionId ?? null;
  }

  /**
   * Handles one line the client sent; never throws (a failure is logged and, for a request,
   * answered). A request is counted by the drain from the moment it is read, so a request read
   * before the end of stdin is served, and one read while the app drains is refused.
   */
  receive(line: NdjsonLine): void {
    if (line.kind === 'invalid') {
      this.write(
        jsonRpcError(
          null,
          JsonRpcErrorCode.ParseError,
          `Parse error: the line is ${line.reason}; send one JSON-RPC message per line`,
        ),
      );
      return;
    }
    const classified = classifyJsonRpc(line.value);
    let inFlight: McpInFlightRequest | null = null;
    if (classified.kind === 'request') {
      inFlight = this.admit(classified.message.id);
      if (!inFlight) return;
    }
    const work = this.traced(classified, line.raw, inFlight)
      .catch((error: unknown) => this.failed(classified, error))
      .finally(() => inFlight?.leave());
    this.handling.add(work);
    void work.finally(() => this.handling.delete(work));
  }

  /** Answers a line longer than the mount's `maxBodyBytes` (the decoder dropped it). */
  refuseOverflow(chars: number): void {
    this.write(
      jsonRpcError(
        null,
        JsonRpcErrorCode.InvalidRequest,
        `Invalid Request: the line is longer than ${this.parts.options.maxBodyBytes} characters (${chars} so far); it was dropped`,
      ),
    );
  }

  /** Resolves once every message received so far was handled (answered and recorded). */
  async settled(): Promise<void> {
    while (this.handling.size > 0) await Promise.allSettled([...this.handling]);
  }

  /**
   * Ends the connection's session like a DELETE over HTTP: the row is terminated, what it holds
   * on the bus is let go of and a `terminate` audit row is written. Call it once the messages
   * in flight settled, before the app closes its database.
   */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.stateless.end();
    const session = this.session;
    if (!session) return;
    const startedAt = new Date();
    if (this.stream) this.parts.registry.remove(session.sessionId, this.stream);
    await this.parts.sessions.terminate(session);
    await this.parts.bus.endSession(session.sessionId);
    await this.parts.log.forget(session.sessionId, SESSION_STREAM_ID);
    await this.parts.events.record(this.event(session, startedAt, { kind: 'terminate', status: 204 }));
  }

  /**
   * Handles a message inside its SERVER span, as the HTTP endpoint handles a POST: the parent is
   * the trace context of the message's `_meta`, the transport `pipe`, and the outcome the one its
   * audit row records. Without an OpenTelemetry SDK nothing is made or wrapped.
   */
  private async traced(classified: ClassifiedMessage, raw: string, inFlight: McpInFlightRequest | null): Promise<void> {
    if (classified.kind === 'invalid' || !mcpTelemetryActive()) return this.handle(classified, raw, inFlight);
    const message = classified.message;
    const params = 'method' in message ? message.params : undefined;
    const span = startExchangeSpan(
      'server',
      {
        method: 'method' in message ? message.method : null,
        requestId: 'id' in message ? message.id : null,
        ...(params ? { params } : {}),
        sessionId: this.session?.sessionId ?? null,
        protocolVersion: envelopeVersionOf(params) ?? this.session?.protocolVersion ?? null,
        transport: 'pipe',
        attributes: { [McpAttr.Mount]: this.parts.options.mount },
      },
      extractInboundContext(params, undefined),
      this.parts.options.telemetry,
    );
    try {
      await otelContext.with(contextWithExchange(span), () => this.handle(classified, raw, inFlight));
    } catch (error) {
      span.end({ error });
      throw error;
    } finally {
      span.end();
    }
  }

  private async handle(classified: ClassifiedMessage, raw: string, inFlight: McpInFlightRequest | null): Promise<void> {
    const startedAt = new Date();
    if (classified.kind === 'invalid') return this.write(classified.error);
    // A dual-era server picks the era per message: the stateless envelope, or the session of initialize.
    if (
      (classified.kind === 'request' || classified.kind === 'notification') &&
      this.stateless.accepts(classified.message)
    )
      return this.stateless.handle(classified.message, raw, startedAt, inFlight);
    if (classified.kind === 'request' && classified.message.method === McpMethod.Initialize) {
      if (this.opening || this.session)
        return this.write(
          jsonRpcError(
            classified.message.id,
            JsonRpcErrorCode.InvalidRequest,
            'Invalid Request: this connection is already initialized',
          ),
        );
      this.opening = this.initialize(classified.message, raw, startedAt);
      return this.opening;
    }
    await this.opening?.catch(() => undefined);
    if (!this.session) {
      if (classified.kind === 'request')
        this.write(
          jsonRpcError(
            classified.message.id,
            TRANSPORT_ERROR_CODE,
            `Bad Request: send initialize first, or carry the revision in _meta["${StatelessMetaKey.ProtocolVersion}"] (${STATELESS_PROTOCOL_VERSIONS.join(', ')})`,
          ),
        );
      else this.parts.logger.warn(`A ${classified.kind} arrived before initialize; it was dropped`);
      return;
    }
    return this.exchange(classified, raw, this.session, startedAt, inFlight);
  }

  /** Counts a request in the drain; while the app drains it is refused instead (null). */
  private admit(id: JsonRpcId): McpInFlightRequest | null {
    const { drain, options } = this.parts;
    if (!drain.draining) return drain.enter(options.mount);
    drain.refused();
    this.write(
      jsonRpcError(id, TRANSPORT_ERROR_CODE, 'Service unavailable: the server is shutting down', {
        retryAfterMs: options.shutdown.retryAfterMs,
      }),
    );
    return null;
  }

  private async initialize(request: JsonRpcRequest, raw: string, startedAt: Date): Promise<void> {
    const { options, sessions, toolset, events } = this.parts;
    try {
      const max = options.limits.sessionsPerPrincipal;
      if ((await sessions.countOpen(this.principal)) >= max) {
        return this.write(
          jsonRpcError(
            request.id,
            TRANSPORT_ERROR_CODE,
            `Too many open sessions: this principal already holds ${max}. End a session you no longer use, or wait for idle ones to expire`,
            { limit: 'sessionsPerPrincipal', max },
          ),
        );
      }
      const requestedVersion = request.params?.protocolVersion;
      const response = await toolset.deliver(request, {
        principal: this.principal,
        sessionId: null,
        protocolVersion: isSupportedSessionVersion(requestedVersion) ? requestedVersion : SESSION_PROTOCOL_VERSIONS[0],
      });
      const result = response && 'result' in response ? response.result : null;
      if (!result) return this.write(response);
      const hello: McpNewInboundSession = {
        principal: this.principal,
        protocolVersion: String(result.protocolVersion),
        clientInfo: asRecord(request.params?.clientInfo),
        clientCapabilities: asRecord(request.params?.capabilities),
      };
      const session = await sessions.open(hello);
      currentExchange()?.setSessionId(session.sessionId);
      this.hello = hello;
      const json = JSON.stringify(response);
      await events.record(
        this.event(session, startedAt, {
          kind: 'request',
          method: request.method,
          request: new JsonText(raw),
          response: new JsonText(json),
          status: 200,
        }),
      );
      this.session = session;
      this.listen(session);
      this.send(json);
    } finally {
      this.opening = null;
    }
  }

  /** The session's own notifications (list changes, resource updates) are written on the connection. */
  private listen(session: McpInboundSessionRecord): void {
    const stream: McpOpenStream = {
      principalKey: session.principalKey,
      deliver: (_seq, json) => {
        if (this.ended) return false;
        this.send(json);
        return true;
      },
      close: () => {
        // The session ended elsewhere (found idle, or ended by the app): requests now get "not found".
        this.parts.registry.remove(session.sessionId, stream);
      },
    };
    this.stream = stream;
    this.parts.registry.add(session.sessionId, stream);
  }

  private async exchange(
    exchange: Exchange,
    raw: string,
    opened: McpInboundSessionRecord,
    startedAt: Date,
    inFlight: McpInFlightRequest | null,
  ): Promise<void> {
    const { toolset, bus, registry, events } = this.parts;
    const session = await this.current(opened);
    currentExchange()?.setSessionId(session?.sessionId ?? opened.sessionId);
    if (!session) {
      if (exchange.kind === 'request')
        this.write(jsonRpcError(exchange.message.id, SESSION_NOT_FOUND_CODE, 'Session not found'));
      return;
    }
    // The drain deadline aborts the request's own source; a notification or an answer gets one of its own.
    const call = new StdioCall(this.parts, this.send, session, exchange, inFlight?.abort ?? new LazyAbort());
    registry.trackRequest(session.sessionId, call);
    const base = { kind: exchange.kind, method: call.method, request: new JsonText(raw) };
    const isRequest = exchange.kind === 'request';
    let response: JsonRpcResponse | null;
    try {
      response = await abortedAtShutdown(
        inFlight,
        exchange.message,
        toolset.deliver(
          exchange.message,
          new SourcedDelivery(
            {
              principal: this.principal,
              sessionId: session.sessionId,
              protocolVersion: session.protocolVersion,
              clientCapabilities: session.clientCapabilities,
              logLevel: session.logLevel,
              notify: isRequest ? call.notify : undefined,
              client: isRequest ? call : undefined,
            },
            call.abort,
          ),
        ),
      );
      await bus.forward(exchange.kind, exchange.message, session);
    } catch (error) {
      await events
        .record(
          this.event(session, startedAt, {
            ...base,
            status: 500,
            note: `Internal error: ${(error as Error)?.message ?? String(error)}`,
          }),
        )
        .catch(() => undefined);
      throw error;
    } finally {
      registry.untrackRequest(call);
    }
    const json = response ? JSON.stringify(response) : null;
    await events.record(
      this.event(session, startedAt, {
        ...base,
        ...exchangeOutcome(response, json, { shutdown: inFlight?.deadlineFired === true, streaming: false }),
      }),
    );
    if (json !== null) this.send(json);
  }

  /**
   * The session read again for each message, as over HTTP (its log level may have changed). A
   * session found idle (`sessions.idleTtlMs` without a message: a desktop client left open) is
   * replaced by a new one with the same client facts, since a stdio client cannot initialize
   * again on the same connection; its log level starts unset again.
   */
  private async current(opened: McpInboundSessionRecord): Promise<McpInboundSessionRecord | null> {
    const { sessions, registry, logger } = this.parts;
    const session = this.session ?? opened;
    const found = await sessions.find(session.sessionId, this.principal);
    if (found || this.ended || !this.hello) return found;
    if (this.session !== session) return this.session;
    this.renewing ??= (async () => {
      if (this.stream) registry.remove(session.sessionId, this.stream);
      const renewed = await sessions.open(this.hello!);
      logger.log(
        `The session ${session.sessionId} was found idle and ended; the connection goes on as ${renewed.sessionId}`,
      );
      this.session = renewed;
      this.listen(renewed);
      return renewed;
    })().finally(() => (this.renewing = null));
    return this.renewing;
  }

  /** A handling that failed outside the toolset's answers (a database outage): logged, and a request answered. */
  private failed(classified: ClassifiedMessage, error: unknown): void {
    this.parts.logger.error(`A message could not be handled: ${(error as Error)?.message ?? String(error)}`);
    if (classified.kind === 'request')
      this.write(jsonRpcError(classified.message.id, JsonRpcErrorCode.InternalError, 'Internal error'));
  }

  private write(message: JsonRpcResponse | null): void {
    if (message) this.send(JSON.stringify(message));
  }

  /** The audit row of an exchange on the session; its outcome is noted on the message's span too. */
  private event(
    session: McpInboundSessionRecord,
    startedAt: Date,
    fields: Partial<McpEventInput> & Pick<McpEventInput, 'kind'>,
  ): McpEventInput {
    if (fields.kind !== 'terminate') {
      const response = fields.response instanceof JsonText ? fields.response.text : fields.response;
      noteInboundOutcome({
        status: fields.status ?? null,
        errorCode: fields.errorCode ?? null,
        isError: fields.isError === true,
        response,
      });
    }
    return sessionEvent(this.parts.options.mount, session, startedAt, fields);
  }
}

function asRecord(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/**
 * One message of the connection being handled: its abort source (aborted by the drain deadline
 * and by the end of the session, which tracks this object), and, for a request, its way back to
 * the client: notifications and server->client requests written as frames of their own.
 */
class StdioCall implements McpClientChannel {
  readonly principalKey: string;
  readonly method: string | null;
  private readonly sessionId: string;

  constructor(
    private readonly parts: McpStdioParts,
    private readonly send: (json: string) => void,
    session: McpInboundSessionRecord,
    private readonly exchange: Exchange,
    readonly abort: LazyAbort,
  ) {
    this.principalKey = session.principalKey;
    this.sessionId = session.sessionId;
    this.method = 'method' in exchange.message ? exchange.message.method : null;
  }

  /** Sends a notification of the request, unless it was aborted. */
  readonly notify = (notification: JsonRpcNotification): void => {
    if (!this.abort.aborted) this.send(JSON.stringify(notification));
  };

  /** @inheritdoc */
  request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { pending, options } = this.parts;
    const id = pending.nextId();
    const callId = (this.exchange.message as JsonRpcRequest).id;
    const answer = pending.wait(
      this.sessionId,
      id,
      method,
      callId,
      options.streams.clientRequestTimeoutMs,
      this.abort.signal,
    );
    if (!this.abort.aborted) this.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return answer;
  }

  /** The session ended while the message was handled: aborts it. */
  close(): void {
    this.abort.abort(new Error('The session ended'));
  }
}
