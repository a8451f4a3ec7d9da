import { Inject, Injectable } from '@nestjs/common';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import type { McpEventSink } from '../../persistence/interfaces/mcp-event-sink.interface';
import { JsonText } from '../../persistence/json-text';
import { MCP_COLUMN_LENGTHS } from '../../persistence/mcp-columns.constants';
import { InjectMcpEventSink } from '../../persistence/mcp-persistence.constants';
import type { JsonRpcNotification, JsonRpcRequest, JsonRpcResponse } from '../../protocol/jsonrpc';
import { httpStatusOf } from '../config/limit-exceeded.errors';
import { auditNoteOf } from '../pipeline/handler-refusal';
import { SHUTDOWN_AUDIT_NOTE } from '../shutdown/shutdown-answers';
import { httpStatusForError } from '../stateless/stateless-rejection';
import { noteInboundOutcome } from './mcp-inbound-span';

/** What the audit row of one stateless exchange is made of. */
export interface StatelessExchange {
  message: JsonRpcRequest | JsonRpcNotification;
  /** The body exactly as received. */
  text: string;
  principal: McpPrincipal;
  startedAt: Date;
  /** The revision the envelope named, when it named one. */
  version: string | null;
}

/**
 * Writes the `mcp_events` row of each stateless exchange: no session (`session_ref` null), the
 * revision the request named, the principal, both envelopes, the status and the error code.
 * Refused requests leave a row too: the audit trail shows who tried what.
 */
@Injectable()
export class McpStatelessAudit {
  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    @InjectMcpEventSink() private readonly events: McpEventSink,
  ) {}

  /** Records an answered exchange; resolves once the row is committed. */
  record(
    exchange: StatelessExchange,
    status: number,
    responseJson: string | null,
    errorCode: number | null,
    isError = false,
    note: string | null = null,
  ): Promise<void> {
    noteInboundOutcome({ status, errorCode, isError, response: responseJson });
    return this.events.record({
      ...this.base(exchange),
      response: responseJson === null ? null : new JsonText(responseJson),
      status,
      errorCode,
      isError,
      note,
    });
  }

  /**
   * Records an answer of the toolset (a result or a JSON-RPC error): its status is the one
   * `statusOf` gives unless the transport says otherwise (an answer streamed over SSE is a 200),
   * its note the refusal's or the drain's.
   */
  answered(
    exchange: StatelessExchange,
    response: JsonRpcResponse,
    json: string,
    shutdown: boolean,
    status = McpStatelessAudit.statusOf(response),
  ): Promise<void> {
    const code = 'error' in response ? response.error.code : null;
    const isError = 'result' in response && response.result.isError === true;
    return this.record(exchange, status, json, code, isError, shutdown ? SHUTDOWN_AUDIT_NOTE : auditNoteOf(response));
  }

  /**
   * The HTTP status the stateless revision gives an answer: 200 for a result, the limit's own
   * (429) or the one the specification pins to the error code. Over stdio, which has no status,
   * the audit row carries the same one, so both transports read alike in the trail.
   */
  static statusOf(response: JsonRpcResponse): number {
    if (!('error' in response)) return 200;
    return httpStatusOf(response) ?? httpStatusForError(response.error.code);
  }

  /** Records an exchange that failed inside the server (it is answered with HTTP 5xx). */
  failed(exchange: StatelessExchange, error: unknown): Promise<void> {
    const note = `Internal error: ${(error as Error)?.message ?? String(error)}`;
    noteInboundOutcome({ status: 500, error });
    return this.events.record({ ...this.base(exchange), status: 500, note }).catch(() => undefined);
  }

  private base(exchange: StatelessExchange) {
    const { message, text, principal, startedAt, version } = exchange;
    return {
      direction: 'inbound' as const,
      kind: 'id' in message ? 'request' : 'notification',
      mount: this.options.mount,
      sessionRef: null,
      principalKey: principal.key,
      method: message.method,
      protocolVersion: version === null ? null : version.slice(0, MCP_COLUMN_LENGTHS.protocolVersion),
      request: new JsonText(text),
      createdAt: startedAt,
      durationMs: Date.now() - startedAt.getTime(),
    };
  }
}
