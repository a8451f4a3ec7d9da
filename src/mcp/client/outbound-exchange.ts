import { Inject, Injectable } from '@nestjs/common';
import { context as otelContext } from '@opentelemetry/api';
import { randomUUID } from 'node:crypto';
import { McpServerError } from '../errors/mcp-client.errors';
import type {
  McpOutboundSessionRecord,
  McpOutboundSessionStore,
} from '../persistence/interfaces/mcp-outbound-session-store.interface';
import { InjectMcpOutboundSessionStore } from '../persistence/mcp-persistence.constants';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../protocol/jsonrpc';
import { McpServerRequestDispatcher } from './handlers/server-request-dispatcher';
import type { McpCallJob, McpCallServerRequestHandler } from './interfaces/mcp-call.interface';
import { McpOutboundEventRecorder } from './outbound-event-recorder';
import { McpCallAbortedError, abortReasonText } from './mcp-call-aborted.errors';
import type {
  McpHandshakeInfo,
  McpServerNotificationHandler,
  McpTransportResult,
} from './transports/mcp-transport.interface';
import { McpTransportRegistry } from './transports/transport-registry';
import type { McpResolvedClientOptions } from './config/client-options-resolver';
import type { McpResolvedServerConfig } from './interfaces/mcp-server-config.interface';
import { MCP_CLIENT_OPTIONS } from './mcp-client.constants';
import { startExchangeSpan, type McpExchangeDescription } from '../telemetry/mcp-spans';
import { McpAttr } from '../telemetry/mcp-telemetry.constants';
import { paramsWithTraceContext } from '../telemetry/trace-carriers';

/** The span attributes of the transport a server entry names. */
function transportOf(
  config: McpResolvedServerConfig,
): Pick<McpExchangeDescription, 'transport' | 'serverAddress' | 'serverPort'> {
  if (config.transport === 'stdio') return { transport: 'pipe' };
  if (config.transport === 'toolset') return { transport: 'inproc' };
  if (config.transport !== 'http' || typeof (config as { url?: unknown }).url !== 'string') return {};
  try {
    const url = new URL((config as { url: string }).url);
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    return { transport: 'tcp', serverAddress: url.hostname.replace(/^\[|\]$/g, ''), serverPort: port };
  } catch {
    return { transport: 'tcp' };
  }
}

/** One request to send for a call. */
export interface McpExchangeRequest {
  job: McpCallJob;
  /** The persisted remote session of (server, scope key), if any. */
  session: McpOutboundSessionRecord | null;
  /** Receives the server's notifications, with where they arrived. */
  notify: McpServerNotificationHandler;
  /** The caller's abort signal: a failure after it fired becomes `McpCallAbortedError`. */
  signal?: AbortSignal;
  /** The call's own answerer of server requests (`McpCallAttempt.answer`), before the app-wide handlers. */
  answer?: McpCallServerRequestHandler;
  method: string;
  params?: Record<string, unknown>;
  /** Send it as a stateless request in this revision (params already carry the envelope). */
  statelessVersion?: string;
  /** HTTP headers of this request only (the `Mcp-Param-*` headers of a stateless `tools/call`). */
  headers?: Record<string, string>;
  /** Checks a handshake the transport performs on the way, before the request is sent (see `McpTransportContext.onHandshake`). */
  onHandshake?: (handshake: McpHandshakeInfo) => void;
}

/** What one exchange produced. */
export interface McpExchangeOutcome {
  /** The JSON-RPC answer (a success or an error). */
  response: JsonRpcResponse | null;
  /** The remote session after the exchange (a handshake may have opened or replaced it). */
  session: McpOutboundSessionRecord | null;
}

/**
 * Sends one request through the server's transport with a fresh id, persists what a handshake
 * taught about the remote session, and writes the event row of the exchange, also when it failed.
 */
@Injectable()
export class McpOutboundExchanger {
  constructor(
    private readonly transports: McpTransportRegistry,
    @InjectMcpOutboundSessionStore() private readonly sessions: McpOutboundSessionStore,
    private readonly recorder: McpOutboundEventRecorder,
    private readonly dispatcher: McpServerRequestDispatcher,
    @Inject(MCP_CLIENT_OPTIONS) private readonly options: McpResolvedClientOptions,
  ) {}

  /** Sends the request and resolves to its JSON-RPC result. @throws McpServerError for a JSON-RPC error answer. */
  async call(
    request: McpExchangeRequest,
  ): Promise<{ result: Record<string, unknown>; session: McpOutboundSessionRecord | null }> {
    const { response, session } = await this.send(request);
    if (response && 'error' in response) throw new McpServerError(response.error);
    return { result: response && 'result' in response ? response.result : {}, session };
  }

  /** Sends the request; rejects with the transport's failure, after recording it. */
  async send(request: McpExchangeRequest): Promise<McpExchangeOutcome> {
    const { job, session, method, statelessVersion, headers } = request;
    const id = randomUUID();
    const remoteSessionId = statelessVersion ? null : (session?.remoteSessionId ?? null);
    // One CLIENT span per exchange; its context travels in params._meta (and, over HTTP, the headers).
    const span = startExchangeSpan(
      'client',
      {
        method,
        requestId: id,
        ...(request.params ? { params: request.params } : {}),
        sessionId: remoteSessionId,
        protocolVersion: statelessVersion ?? session?.protocolVersion ?? null,
        ...transportOf(this.transports.config(job.server)),
        attributes: { [McpAttr.ServerName]: job.server },
      },
      otelContext.active(),
      this.options.telemetry,
    );
    const params = paramsWithTraceContext(request.params, span.context);
    const message: JsonRpcRequest = { jsonrpc: '2.0', id, method, ...(params ? { params } : {}) };
    const startedAt = new Date();
    const started = performance.now();
    let outcome: McpTransportResult | undefined;
    let failure: unknown;
    const notices: Promise<void>[] = [];
    const onCancelNotice = (notice: JsonRpcNotification, error?: unknown) =>
      notices.push(this.recordNotice(request, session, notice, error));
    try {
      outcome = await otelContext.with(span.context, () =>
        this.transports.get(job.server).deliver(message, {
          sessionId: remoteSessionId,
          protocolVersion: statelessVersion ?? session?.protocolVersion ?? null,
          stateless: statelessVersion !== undefined,
          ...(headers ? { headers } : {}),
          context: {
            server: job.server,
            scopeKey: job.scopeKey,
            timeoutMs: job.timeoutMs,
            ...(job.deadlineAt !== undefined ? { deadlineAt: job.deadlineAt } : {}),
            ...(request.onHandshake ? { onHandshake: request.onHandshake } : {}),
            onServerRequest: this.dispatcher.forCall(job.server, job.scopeKey, request.answer, request.signal),
            ...(request.answer ? { clientCapabilities: this.dispatcher.capabilities(true) } : {}),
            onNotification: request.notify,
            onCancelNotice,
            ...(request.signal ? { signal: request.signal } : {}),
          },
        }),
      );
    } catch (error) {
      failure = error;
      // The transport reports an abort as its own failure; the caller asked for it: say so.
      if (request.signal?.aborted && !(error instanceof McpServerError)) {
        const delivered = (error as { delivered?: boolean }).delivered !== false;
        failure = new McpCallAbortedError(job.server, method, delivered, abortReasonText(request.signal.reason));
      }
    }
    const durationMs = performance.now() - started;
    const body = outcome?.body;
    if (outcome?.sessionId && !statelessVersion && outcome.sessionId !== remoteSessionId)
      span.setSessionId(outcome.sessionId);
    span.end({
      errorCode: body && 'error' in body ? body.error.code : null,
      isError: !!body && 'result' in body && body.result.isError === true,
      status: outcome?.status ?? null,
      ...(failure !== undefined ? { error: failure } : {}),
      response: body && 'result' in body ? body.result : body && 'error' in body ? body.error : null,
    });
    // The exchange's row is written even when its session could not be stored.
    let updated = session;
    if (outcome && !statelessVersion)
      updated = await this.remember(job, session, outcome).catch((error: unknown) => ((failure = error), session));
    await this.recorder.record({
      server: job.server,
      scopeKey: job.scopeKey,
      sessionRef: updated?.id ?? null,
      protocolVersion: statelessVersion ?? updated?.protocolVersion ?? null,
      message,
      response: outcome?.body ?? null,
      status: outcome?.status ?? (failure as { status?: number } | undefined)?.status ?? null,
      startedAt,
      durationMs,
      stderr: outcome?.stderr ?? (failure as { stderr?: string } | undefined)?.stderr,
      error: failure,
      traceId: span.traceId,
    });
    await Promise.all(notices);
    if (!outcome || failure !== undefined) throw failure;
    return { response: outcome.body, session: updated };
  }

  /** The audit row of a `notifications/cancelled` the transport sent for the request. */
  private recordNotice(
    request: McpExchangeRequest,
    session: McpOutboundSessionRecord | null,
    notice: JsonRpcNotification,
    error?: unknown,
  ): Promise<void> {
    return this.recorder.record({
      server: request.job.server,
      scopeKey: request.job.scopeKey,
      sessionRef: session?.id ?? null,
      protocolVersion: request.statelessVersion ?? session?.protocolVersion ?? null,
      message: notice,
      response: null,
      status: null,
      startedAt: new Date(),
      durationMs: 0,
      ...(error !== undefined ? { error } : {}),
    });
  }

  private unchanged(
    session: McpOutboundSessionRecord,
    handshake: NonNullable<McpTransportResult['handshake']>,
  ): boolean {
    return (
      session.protocolVersion === handshake.protocolVersion &&
      JSON.stringify(session.serverCapabilities) === JSON.stringify(handshake.capabilities) &&
      JSON.stringify(session.serverInfo) === JSON.stringify(handshake.serverInfo)
    );
  }

  /** Persists what the exchange taught about the remote session (new id, handshake). */
  private async remember(
    job: McpCallJob,
    session: McpOutboundSessionRecord | null,
    outcome: McpTransportResult,
  ): Promise<McpOutboundSessionRecord | null> {
    const handshake = outcome.handshake;
    const sameSession = session && session.remoteSessionId === outcome.sessionId;
    if (sameSession && (!handshake || this.unchanged(session, handshake))) return session;
    if (!handshake && !session && outcome.sessionId === null) return null;
    const state = {
      remoteSessionId: outcome.sessionId,
      protocolVersion: handshake?.protocolVersion ?? session?.protocolVersion ?? 'unknown',
      serverInfo: handshake?.serverInfo ?? session?.serverInfo ?? null,
      serverCapabilities: handshake?.capabilities ?? session?.serverCapabilities ?? null,
      endpoint: this.transports.endpointKey(job.server),
    };
    const id = await this.sessions.save(job.server, job.scopeKey, state);
    const now = new Date();
    return {
      id,
      server: job.server,
      scopeKey: job.scopeKey,
      ...state,
      createdAt: session?.createdAt ?? now,
      updatedAt: now,
      closedAt: null,
    };
  }
}
