import type { IncomingHttpHeaders } from 'node:http';
import { SpanKind, SpanStatusCode, trace, type Attributes, type Context } from '@opentelemetry/api';
import type { JsonRpcMessage } from '../../protocol/jsonrpc';
import { McpHeader } from '../../protocol/mcp-methods';
import { envelopeVersionOf } from '../../protocol/stateless';
import type { McpExchangeOutcome } from '../../telemetry/mcp-spans';
import {
  currentExchange,
  errorTypeOf,
  mcpTracer,
  sessionIdAttribute,
  startExchangeSpan,
  type McpExchangeSpan,
} from '../../telemetry/mcp-spans';
import { McpAttr } from '../../telemetry/mcp-telemetry.constants';
import type { McpResolvedTelemetryOptions } from '../../telemetry/mcp-telemetry.options';
import { extractInboundContext } from '../../telemetry/trace-carriers';
import { headerValue } from './mcp-http-checks';

/** Host and port of a `Host` header (`example.com:8080`, `[::1]:3000`). */
function hostOf(headers: IncomingHttpHeaders): { address?: string; port?: number } {
  const host = headerValue(headers, 'host');
  const match = host ? /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host) : null;
  if (!match) return {};
  return { address: match[1].replace(/^\[|\]$/g, ''), ...(match[2] ? { port: Number(match[2]) } : {}) };
}

/** The MCP headers of a request, already read by the caller. */
export interface McpInboundHeaderValues {
  readonly sessionIdHeader: string | undefined;
  readonly protocolVersionHeader: string | undefined;
}

/**
 * Starts the SERVER span of one POSTed message. Its parent is the trace context of the
 * message's `params._meta` (`traceparent`, `tracestate`, `baggage`), else that of the HTTP
 * headers, else the active context. Without an OpenTelemetry SDK the span is a no-op (it still
 * carries a valid remote parent, whose trace id then reaches the audit row). `read` gives the
 * MCP headers when the caller already read them.
 */
export function startInboundSpan(
  message: JsonRpcMessage,
  headers: IncomingHttpHeaders,
  mount: string,
  telemetry: McpResolvedTelemetryOptions,
  clientAddress?: string,
  read?: McpInboundHeaderValues,
): McpExchangeSpan {
  const params = 'method' in message ? message.params : undefined;
  const { address, port } = hostOf(headers);
  const headerVersion = read ? read.protocolVersionHeader : headerValue(headers, McpHeader.ProtocolVersion);
  const version = envelopeVersionOf(params) ?? headerVersion ?? null;
  const sessionId = (read ? read.sessionIdHeader : headerValue(headers, McpHeader.SessionId)) ?? null;
  return startExchangeSpan(
    'server',
    {
      method: 'method' in message ? message.method : null,
      requestId: 'id' in message ? message.id : null,
      ...(params ? { params } : {}),
      sessionId,
      protocolVersion: version,
      transport: 'tcp',
      ...(address ? { serverAddress: address } : {}),
      ...(port ? { serverPort: port } : {}),
      ...(clientAddress ? { clientAddress } : {}),
      attributes: { [McpAttr.Mount]: mount },
    },
    extractInboundContext(params, headers),
    telemetry,
  );
}

/** Notes the outcome of the inbound exchange running now (what its audit row says), for its span. */
export function noteInboundOutcome(outcome: McpExchangeOutcome): void {
  currentExchange()?.note(outcome);
}

/** Name of the SERVER span of a DELETE that ends a 2025-11-25 session. */
export const SESSION_END_SPAN = 'mcp.session.end';

/** Name of the SERVER span of a GET that opens (or resumes) a session's event stream. */
export const STREAM_OPEN_SPAN = 'mcp.stream.open';

/** The SERVER span of a GET or DELETE on a session mount (no JSON-RPC message: the HTTP request is the exchange). */
export interface McpSessionHttpSpan {
  /** The context with the span active (what the session lookup runs in). */
  readonly context: Context;
  /** Sets attributes learnt while answering (the stream's kind...). */
  set(attributes: Attributes): void;
  /**
   * Ends the span (once) with the HTTP status of the answer: a status of 400 or more, or a thrown
   * `error`, sets status ERROR and `error.type` (the status, else the error's class name).
   */
  end(status: number | null, error?: unknown): void;
}

/**
 * Starts the SERVER span of a GET (`mcp.stream.open`) or a DELETE (`mcp.session.end`). Its
 * parent is the trace context of the HTTP headers (`traceparent`, `tracestate`, `baggage`), else
 * the active context. It carries the digest of the `Mcp-Session-Id` header, the method, the mount
 * and the network attributes of a POST's span.
 */
export function startSessionHttpSpan(
  name: string,
  method: 'GET' | 'DELETE',
  headers: IncomingHttpHeaders,
  mount: string,
  clientAddress?: string,
  extra: Attributes = {},
): McpSessionHttpSpan {
  const parent = extractInboundContext(undefined, headers);
  const { address, port } = hostOf(headers);
  const version = headerValue(headers, McpHeader.ProtocolVersion);
  const attributes: Attributes = {
    [McpAttr.HttpRequestMethod]: method,
    [McpAttr.Mount]: mount,
    [McpAttr.NetworkTransport]: 'tcp',
    [McpAttr.NetworkProtocolName]: 'http',
    ...(version ? { [McpAttr.ProtocolVersion]: version } : {}),
    ...(address ? { [McpAttr.ServerAddress]: address } : {}),
    ...(port ? { [McpAttr.ServerPort]: port } : {}),
    ...(clientAddress ? { [McpAttr.ClientAddress]: clientAddress } : {}),
    ...extra,
  };
  const span = mcpTracer().startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  const sessionId = headerValue(headers, McpHeader.SessionId);
  // The digest is computed for a recorded span only.
  if (sessionId && span.isRecording()) span.setAttribute(McpAttr.SessionId, sessionIdAttribute(sessionId));
  let ended = false;
  return {
    context: trace.setSpan(parent, span),
    set: (more) => span.setAttributes(more),
    end: (status, error) => {
      if (ended) return;
      ended = true;
      if (status !== null) span.setAttribute(McpAttr.HttpResponseStatusCode, status);
      const failed = error !== undefined || (status !== null && status >= 400);
      if (failed) {
        span.setAttribute(McpAttr.ErrorType, error !== undefined ? errorTypeOf(error) : String(status));
        const message = error !== undefined ? String((error as Error)?.message ?? error) : undefined;
        span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
        if (error instanceof Error) span.recordException(error);
      }
      span.end();
    },
  };
}
