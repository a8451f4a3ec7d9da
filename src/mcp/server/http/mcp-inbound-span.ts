import type { IncomingHttpHeaders } from 'node:http';
import type { JsonRpcMessage } from '../../protocol/jsonrpc';
import { McpHeader } from '../../protocol/mcp-methods';
import { envelopeVersionOf } from '../../protocol/stateless';
import type { McpExchangeOutcome } from '../../telemetry/mcp-spans';
import { currentExchange, startExchangeSpan, type McpExchangeSpan } from '../../telemetry/mcp-spans';
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

/**
 * Starts the SERVER span of one POSTed message. Its parent is the trace context of the
 * message's `params._meta` (`traceparent`, `tracestate`, `baggage`), else that of the HTTP
 * headers, else the active context. Without an OpenTelemetry SDK the span is a no-op (it still
 * carries a valid remote parent, whose trace id then reaches the audit row).
 */
export function startInboundSpan(message: JsonRpcMessage, headers: IncomingHttpHeaders, mount: string, telemetry: McpResolvedTelemetryOptions, clientAddress?: string): McpExchangeSpan {
  const params = 'method' in message ? message.params : undefined;
  const { address, port } = hostOf(headers);
  const version = envelopeVersionOf(params) ?? headerValue(headers, McpHeader.ProtocolVersion) ?? null;
  const sessionId = headerValue(headers, McpHeader.SessionId) ?? null;
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
