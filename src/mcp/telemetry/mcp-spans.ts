import { createHash } from 'node:crypto';
import {
  context as otelContext,
  createContextKey,
  createNoopMeter,
  metrics,
  propagation,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { McpResolvedTelemetryOptions } from './mcp-telemetry.options';
import { mcpInstruments, recordAuditCommit } from './mcp-metrics';
import {
  MCP_INSTRUMENTATION_NAME,
  MCP_INSTRUMENTATION_VERSION,
  McpAttr,
  TOOL_ERROR_TYPE,
} from './mcp-telemetry.constants';

/** The package's tracer on the provider registered now (a no-op one without an SDK). */
export function mcpTracer(): Tracer {
  return trace.getTracer(MCP_INSTRUMENTATION_NAME, MCP_INSTRUMENTATION_VERSION);
}

/** The tracer provider a ProxyTracerProvider delegates to while no SDK registered one. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * Where `@opentelemetry/api` (major version 1) keeps every global it registers: the key is the
 * API's contract between its copies. The object is made by the first registration of any kind.
 */
const OTEL_API_GLOBALS = Symbol.for('opentelemetry.js.api.1');

/** True while nothing at all was registered with `@opentelemetry/api`: no context manager either, so no span is active. */
function noTelemetryRegistered(): boolean {
  return (globalThis as Record<symbol, unknown>)[OTEL_API_GLOBALS] === undefined;
}

/**
 * True when anything would see the spans of this package: a registered tracer provider, meter
 * provider or propagator. Read per call, so an SDK registered after boot is picked up; without
 * any, the hot path makes no span, attribute object or context. While nothing at all was
 * registered (no SDK in the process), one property read answers; otherwise three global look-ups.
 */
export function mcpTelemetryActive(): boolean {
  if (noTelemetryRegistered()) return false;
  const tracerProvider = trace.getTracerProvider();
  if (!(tracerProvider instanceof ProxyTracerProvider) || tracerProvider.getDelegate() !== NOOP_TRACER_PROVIDER)
    return true;
  if (propagation.fields().length > 0) return true;
  return (
    metrics.getMeterProvider().getMeter(MCP_INSTRUMENTATION_NAME, MCP_INSTRUMENTATION_VERSION) !== createNoopMeter()
  );
}

/** What is known about an exchange when its span starts. */
export interface McpExchangeDescription {
  /** The JSON-RPC method; null for a client's answer (a response message). */
  method: string | null;
  /** The JSON-RPC id of a request. */
  requestId?: string | number | null;
  /** The request's params: the tool, prompt or resource name is read from them, never the arguments. */
  params?: Record<string, unknown>;
  /** The 2025-11-25 session id (recorded as its digest, see `sessionIdAttribute`). */
  sessionId?: string | null;
  /** The revision the exchange speaks. */
  protocolVersion?: string | null;
  /** `tcp` (HTTP), `pipe` (stdio) or `inproc` (a toolset of this process). */
  transport?: 'tcp' | 'pipe' | 'inproc';
  /** Host of the server, when known. */
  serverAddress?: string;
  /** Port of the server, when known. */
  serverPort?: number;
  /** Address of the client (inbound). */
  clientAddress?: string;
  /** Extra attributes (the mount, the configured server name). */
  attributes?: Attributes;
}

/** How an exchange ended. */
export interface McpExchangeOutcome {
  /** The JSON-RPC error code of the answer, when it was an error. */
  errorCode?: number | null;
  /** A `tools/call` result with `isError: true`. */
  isError?: boolean;
  /** The HTTP status, when HTTP carried it. */
  status?: number | null;
  /** A failure with no JSON-RPC answer (thrown). */
  error?: unknown;
  /** The answer (recorded only with `recordPayloads`). */
  response?: unknown;
}

/** Longest tool or prompt name kept in a span name or attribute (the specification's names are at most 128). */
const MAX_TARGET = 128;

/** JSON-RPC errors a caller gets for a name the server does not serve: its name stays out of the metrics. */
const UNKNOWN_NAME_ERRORS = new Set(['-32601', '-32602']);

/** The target of a span name: the tool or prompt name, when the method has one. */
function targetOf(method: string | null, params: Record<string, unknown> | undefined): string | null {
  if ((method === 'tools/call' || method === 'prompts/get') && typeof params?.name === 'string')
    return params.name.slice(0, MAX_TARGET);
  return null;
}

/** JSON of a payload, cut to `max` characters. */
export function payloadText(value: unknown, max: number): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  } catch {
    text = '[unserializable]';
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The `error.type` of a thrown failure: its class name, else `_OTHER`. */
export function errorTypeOf(error: unknown): string {
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === 'string' && name ? name : '_OTHER';
}

/**
 * One exchange's span (SERVER for inbound, CLIENT for outbound) and its duration metric. Made by
 * `startExchangeSpan`; `end` records the outcome, ends the span and records the duration.
 */
export class McpExchangeSpan {
  /** The span. */
  readonly span: Span;
  /** The context with the span active: what the handling of the exchange runs in. */
  readonly context: Context;
  private readonly started = performance.now();
  private readonly metricAttributes: Attributes;
  private ended = false;
  private noted: McpExchangeOutcome | null = null;

  /** @internal Built by `startExchangeSpan`. */
  constructor(
    private readonly kind: 'server' | 'client',
    description: McpExchangeDescription,
    parent: Context,
    private readonly options: McpResolvedTelemetryOptions | null,
  ) {
    const { method, params } = description;
    const target = targetOf(method, params);
    const attributes: Attributes = { ...(description.attributes ?? {}) };
    if (method) attributes[McpAttr.MethodName] = method;
    if (description.requestId !== undefined && description.requestId !== null)
      attributes[McpAttr.RequestId] = String(description.requestId);
    if (description.protocolVersion) attributes[McpAttr.ProtocolVersion] = description.protocolVersion;
    if (method === 'tools/call' && target) {
      attributes[McpAttr.ToolName] = target;
      attributes[McpAttr.OperationName] = 'execute_tool';
    }
    if (method === 'prompts/get' && target) attributes[McpAttr.PromptName] = target;
    if (method === 'resources/read' && typeof params?.uri === 'string') attributes[McpAttr.ResourceUri] = params.uri;
    if (description.transport) attributes[McpAttr.NetworkTransport] = description.transport;
    if (description.transport === 'tcp') attributes[McpAttr.NetworkProtocolName] = 'http';
    if (description.serverAddress) attributes[McpAttr.ServerAddress] = description.serverAddress;
    if (description.serverPort) attributes[McpAttr.ServerPort] = description.serverPort;
    if (description.clientAddress) attributes[McpAttr.ClientAddress] = description.clientAddress;
    const name = method ? (target ? `${method} ${target}` : method) : 'mcp response';
    this.span = mcpTracer().startSpan(
      name,
      { kind: kind === 'server' ? SpanKind.SERVER : SpanKind.CLIENT, attributes },
      parent,
    );
    this.context = trace.setSpan(parent, this.span);
    // What costs a digest or a serialisation is computed for a recorded span only.
    if (this.span.isRecording()) {
      if (description.sessionId) this.span.setAttribute(McpAttr.SessionId, sessionIdAttribute(description.sessionId));
      if (options?.recordPayloads && params !== undefined)
        this.span.setAttribute(McpAttr.RequestParams, payloadText(params, options.maxPayloadLength));
    }
    this.metricAttributes = {};
    for (const key of [
      McpAttr.MethodName,
      McpAttr.ToolName,
      McpAttr.PromptName,
      McpAttr.ProtocolVersion,
      McpAttr.NetworkTransport,
      McpAttr.Mount,
      McpAttr.ServerName,
    ]) {
      if (attributes[key] !== undefined) this.metricAttributes[key] = attributes[key];
    }
  }

  /** The trace id, when the span is recorded or continues a valid remote context; null otherwise. */
  get traceId(): string | null {
    const spanContext = this.span.spanContext();
    return trace.isSpanContextValid(spanContext) ? spanContext.traceId : null;
  }

  /** Sets attributes learnt during the exchange (a session id an initialize created...). */
  set(attributes: Attributes): void {
    this.span.setAttributes(attributes);
    for (const key of [McpAttr.ProtocolVersion])
      if (attributes[key] !== undefined) this.metricAttributes[key] = attributes[key];
  }

  /** Records the session an exchange opened or joined (its digest, on a recorded span only). */
  setSessionId(sessionId: string): void {
    if (this.span.isRecording()) this.span.setAttribute(McpAttr.SessionId, sessionIdAttribute(sessionId));
  }

  /** Keeps how the exchange ended (the audit row's fields) for `end`; a later note replaces it. */
  note(outcome: McpExchangeOutcome): void {
    this.noted = outcome;
  }

  /** True once `note` recorded how the exchange ended. */
  get hasOutcome(): boolean {
    return this.noted !== null;
  }

  /**
   * Records how the exchange ended (`outcome` over what `note` kept), ends the span and records
   * its duration; later calls do nothing.
   */
  end(outcome: McpExchangeOutcome = {}): void {
    if (this.ended) return;
    this.ended = true;
    outcome = { ...(this.noted ?? {}), ...outcome };
    const errorType = this.errorType(outcome);
    if (typeof outcome.errorCode === 'number') this.span.setAttribute(McpAttr.RpcStatusCode, String(outcome.errorCode));
    if (errorType) {
      this.span.setAttribute(McpAttr.ErrorType, errorType);
      this.metricAttributes[McpAttr.ErrorType] = errorType;
      // A caller may name anything: names the server refused would make the metrics unbounded.
      if (UNKNOWN_NAME_ERRORS.has(errorType)) {
        delete this.metricAttributes[McpAttr.ToolName];
        delete this.metricAttributes[McpAttr.PromptName];
      }
      const message =
        outcome.error !== undefined ? String((outcome.error as Error)?.message ?? outcome.error) : undefined;
      this.span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
      if (outcome.error instanceof Error) this.span.recordException(outcome.error);
    }
    if (
      this.options?.recordPayloads &&
      outcome.response !== undefined &&
      outcome.response !== null &&
      this.span.isRecording()
    ) {
      this.span.setAttribute(McpAttr.ResponseResult, payloadText(outcome.response, this.options.maxPayloadLength));
    }
    this.span.end();
    const instruments = mcpInstruments();
    (this.kind === 'server' ? instruments.serverDuration : instruments.clientDuration).record(
      (performance.now() - this.started) / 1000,
      this.metricAttributes,
    );
  }

  private errorType(outcome: McpExchangeOutcome): string | null {
    if (typeof outcome.errorCode === 'number') return String(outcome.errorCode);
    if (outcome.error !== undefined) return errorTypeOf(outcome.error);
    if (outcome.isError) return TOOL_ERROR_TYPE;
    if (typeof outcome.status === 'number' && outcome.status >= 400) return String(outcome.status);
    return null;
  }
}

/**
 * Starts the span of one exchange under `parent` (for an inbound one, the context
 * `extractInboundContext` gave). `options` null records no payloads.
 */
export function startExchangeSpan(
  kind: 'server' | 'client',
  description: McpExchangeDescription,
  parent: Context = otelContext.active(),
  options: McpResolvedTelemetryOptions | null = null,
): McpExchangeSpan {
  return new McpExchangeSpan(kind, description, parent, options);
}

/**
 * Runs `work` inside an INTERNAL span `name` (a child of the active context) and ends it with
 * `work`'s outcome: a rejection sets status ERROR and `error.type`. `outcomeOf` may mark a
 * resolved value as failed (returns its `error.type`).
 */
export async function withInternalSpan<T>(
  name: string,
  attributes: Attributes,
  work: () => Promise<T>,
  outcomeOf?: (value: T) => string | null,
): Promise<T> {
  if (!mcpTelemetryActive()) return work();
  const span = mcpTracer().startSpan(name, { kind: SpanKind.INTERNAL, attributes });
  try {
    const value = await otelContext.with(trace.setSpan(otelContext.active(), span), work);
    const errorType = outcomeOf?.(value) ?? null;
    if (errorType) {
      span.setAttribute(McpAttr.ErrorType, errorType);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    return value;
  } catch (error) {
    span.setAttribute(McpAttr.ErrorType, errorTypeOf(error));
    span.setStatus({ code: SpanStatusCode.ERROR, message: String((error as Error)?.message ?? error) });
    if (error instanceof Error) span.recordException(error);
    throw error;
  } finally {
    span.end();
  }
}

/** Records an INTERNAL span that already happened, from `startTime` (epoch ms) until now. */
export function recordPastSpan(
  name: string,
  startTime: number,
  attributes: Attributes,
  parent: Context = otelContext.active(),
): void {
  mcpTracer().startSpan(name, { kind: SpanKind.INTERNAL, attributes, startTime }, parent).end();
}

/** The trace id of the active span, when its context is valid; null otherwise (no SDK, no span). */
export function activeTraceId(ctx?: Context): string | null {
  return activeSpanContext(ctx)?.traceId ?? null;
}

/**
 * Runs one group commit of `rows` audit rows inside an INTERNAL root span `mcp.audit.commit`
 * linked to the spans whose rows it holds (a batch belongs to many traces), and records the
 * batch size and commit latency metrics.
 */
export function withAuditCommitSpan<T>(
  rows: number,
  origins: readonly SpanContext[],
  work: () => Promise<T>,
): Promise<T> {
  // Nothing would see the span or the histograms: the commit is the work alone.
  if (!mcpTelemetryActive()) return work();
  return auditCommitSpan(rows, origins, work);
}

async function auditCommitSpan<T>(rows: number, origins: readonly SpanContext[], work: () => Promise<T>): Promise<T> {
  const span = mcpTracer().startSpan('mcp.audit.commit', {
    kind: SpanKind.INTERNAL,
    root: true,
    attributes: { 'db.operation.batch.size': rows, 'db.collection.name': 'mcp_events' },
    links: origins.map((origin) => ({ context: origin })),
  });
  const started = performance.now();
  let failed = false;
  try {
    return await otelContext.with(trace.setSpan(otelContext.active(), span), work);
  } catch (error) {
    failed = true;
    span.setAttribute(McpAttr.ErrorType, errorTypeOf(error));
    span.setStatus({ code: SpanStatusCode.ERROR, message: String((error as Error)?.message ?? error) });
    throw error;
  } finally {
    span.end();
    recordAuditCommit(rows, (performance.now() - started) / 1000, failed);
  }
}

/** The span context active now, when it is valid (what a batch span links to). */
export function activeSpanContext(ctx?: Context): SpanContext | null {
  if (ctx === undefined && noTelemetryRegistered()) return null;
  const spanContext = trace.getSpanContext(ctx ?? otelContext.active());
  return spanContext && trace.isSpanContextValid(spanContext) ? spanContext : null;
}

const EXCHANGE_KEY = createContextKey('durable-mcp exchange span');

/** The context of `exchange` with the exchange itself findable by `currentExchange` (for code that learns its outcome). */
export function contextWithExchange(exchange: McpExchangeSpan): Context {
  return exchange.context.setValue(EXCHANGE_KEY, exchange);
}

/** The exchange span the active context belongs to, if any. */
export function currentExchange(ctx: Context = otelContext.active()): McpExchangeSpan | undefined {
  return ctx.getValue(EXCHANGE_KEY) as McpExchangeSpan | undefined;
}

/** A session id as span attributes carry it: a SHA-256 digest (32 hex characters), never the id itself, which a caller may hold as its only secret. */
export function sessionIdAttribute(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex').slice(0, 32);
}

/** An INTERNAL span started by `startInternalSpan`. */
export interface McpInternalSpan {
  /** Ends the span (once): with a failure, its status is ERROR and `error.type` its class name. */
  end(error?: unknown): void;
}

/** Starts an INTERNAL span `name` under the active context, for work that is not one callback. */
export function startInternalSpan(name: string, attributes: Attributes): McpInternalSpan {
  const span = mcpTracer().startSpan(name, { kind: SpanKind.INTERNAL, attributes });
  let ended = false;
  return {
    end(error?: unknown) {
      if (ended) return;
      ended = true;
      if (error !== undefined) {
        span.setAttribute(McpAttr.ErrorType, errorTypeOf(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: String((error as Error)?.message ?? error) });
      }
      span.end();
    },
  };
}
