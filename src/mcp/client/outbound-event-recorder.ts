import { Injectable } from '@nestjs/common';
import type { McpEventSink } from '../persistence/interfaces/mcp-event-sink.interface';
import { InjectMcpEventSink } from '../persistence/mcp-persistence.constants';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../protocol/jsonrpc';

/** Longest note kept on an event row (stderr excerpts, error texts). */
const MAX_NOTE = 4000;

/** One outbound exchange to record. */
export interface McpOutboundExchange {
  server: string;
  scopeKey: string;
  sessionRef: string | null;
  protocolVersion: string | null;
  message: JsonRpcRequest | JsonRpcNotification;
  response: JsonRpcResponse | null;
  status: number | null;
  startedAt: Date;
  durationMs: number;
  stderr?: string;
  error?: unknown;
  /** The trace id of the exchange's span; left out, the active span's. */
  traceId?: string | null;
}

/**
 * Writes the `mcp_events` row of each outbound exchange, failed ones too. The row holds the
 * JSON-RPC envelopes only: headers (and so bearer tokens) never reach it.
 */
@Injectable()
export class McpOutboundEventRecorder {
  constructor(@InjectMcpEventSink() private readonly events: McpEventSink) {}

  /** Records one exchange; resolves once its row is committed. */
  record(exchange: McpOutboundExchange): Promise<void> {
    const { message, response } = exchange;
    const isRequest = 'id' in message && message.id !== undefined;
    const result = response && 'result' in response ? response.result : null;
    const errorText =
      exchange.error === undefined
        ? ''
        : // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a thrown value may be anything; String() is the fallback for one without a message
          `${(exchange.error as Error).name ?? 'Error'}: ${(exchange.error as Error).message ?? String(exchange.error)}`;
    const note = [errorText, exchange.stderr ? `stderr: ${exchange.stderr}` : ''].filter(Boolean).join('\n');
    return this.events.record({
      createdAt: exchange.startedAt,
      direction: 'outbound',
      server: exchange.server,
      sessionRef: exchange.sessionRef,
      principalKey: exchange.scopeKey || null,
      kind: isRequest ? 'request' : 'notification',
      method: message.method,
      protocolVersion: exchange.protocolVersion,
      request: message,
      response,
      status: exchange.status,
      errorCode: response && 'error' in response ? response.error.code : null,
      isError: result?.isError === true,
      durationMs: Math.round(exchange.durationMs),
      note: note ? note.slice(-MAX_NOTE) : null,
      ...(exchange.traceId !== undefined ? { traceId: exchange.traceId } : {}),
    });
  }
}
