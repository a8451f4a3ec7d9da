import { Inject, Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import {
  JsonRpcErrorCode,
  jsonRpcError,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc';
import { McpHeader, McpMethod } from '../../protocol/mcp-methods';
import { envelopeVersionOf, isStatelessVersion } from '../../protocol/stateless';
import { isSupportedSessionVersion } from '../../protocol/revisions';
import { acknowledgment, sseListenSink } from '../stateless/listen-stream-registry';
import { checkParamHeaders } from '../stateless/mcp-param-headers';
import { isRejection, readStatelessEnvelope, type StatelessEnvelope } from '../stateless/stateless-envelope';
import { httpStatusForError } from '../stateless/stateless-rejection';
import { httpHeadersOf } from '../config/limit-exceeded.errors';
import { StatelessResponseStream } from '../stateless/stateless-response-stream';
import { McpStatelessResponder } from '../stateless/stateless-responder';
import { Toolset } from '../dispatch/toolset';
import type { McpRequest } from './mcp-body-reader';
import { headerValue } from './mcp-http-checks';
import { sendEmpty, sendJsonText } from '../responses/mcp-http-responses';
import { McpStatelessAudit, type StatelessExchange } from './mcp-stateless-audit';
import { McpListenAgreement, isListenRefusal } from './mcp-listen-agreement';
import type { McpHttpExchange } from './mcp-http-exchange';

type StatelessMessage = JsonRpcRequest | JsonRpcNotification;

/**
 * The stateless (2026-07-28) side of a mount's endpoint: every request carries its revision,
 * identity and capabilities in `_meta`, and is checked, answered and audited on its own, with
 * no session. It reaches the same toolset as the session path, through `Toolset.deliver`;
 * `subscriptions/listen` turns the response into a long-lived notification stream instead.
 */
@Injectable()
export class McpStatelessEndpoint {
  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly toolset: Toolset,
    private readonly responder: McpStatelessResponder,
    private readonly audit: McpStatelessAudit,
    private readonly agreement: McpListenAgreement,
  ) {}

  /**
   * True when a POSTed message takes the stateless path: it carries the `_meta` envelope, or,
   * outside any session, it is not `initialize` and its `MCP-Protocol-Version` header names no
   * session revision (so a malformed envelope gets the stateless revision's -32602).
   */
  accepts(exchange: McpHttpExchange): boolean {
    const { classified } = exchange;
    if (classified.kind !== 'request' && classified.kind !== 'notification') return false;
    if (envelopeVersionOf(classified.message.params) !== null) return true;
    if (classified.kind !== 'request' || classified.message.method === McpMethod.Initialize) return false;
    if (exchange.sessionIdHeader !== undefined) return false;
    const version = exchange.protocolVersionHeader?.trim();
    return !!version && !isSupportedSessionVersion(version);
  }

  /** True for a GET or DELETE that speaks a stateless revision: those verbs do not exist there. */
  isStatelessVerb(req: McpRequest): boolean {
    const version = headerValue(req.headers, McpHeader.ProtocolVersion)?.trim();
    return headerValue(req.headers, McpHeader.SessionId) === undefined && isStatelessVersion(version);
  }

  /** Answers a GET or DELETE on the stateless revision: 405, only POST is defined. */
  methodNotAllowed(res: ServerResponse): void {
    sendEmpty(res, 405, { Allow: 'POST' });
  }

  /**
   * Serves one stateless message and writes its audit row before the answer leaves. The
   * exchange's abort source aborts the handling when the client closes the response stream and at
   * the drain deadline (for a request the drain tracks).
   */
  async serve(http: McpHttpExchange, res: ServerResponse): Promise<void> {
    const { classified, principal } = http;
    if (classified.kind !== 'request' && classified.kind !== 'notification')
      throw new Error('Only requests and notifications take the stateless path');
    const message: StatelessMessage = classified.message;
    const exchange: StatelessExchange = {
      message,
      text: http.text,
      principal,
      startedAt: http.startedAt,
      version: envelopeVersionOf(message.params),
    };
    const header = (name: string) => headerValue(http.headers, name);
    let envelope = readStatelessEnvelope(message, header);
    if (!isRejection(envelope) && 'id' in message && message.method === McpMethod.ToolsCall)
      envelope = checkParamHeaders(this.toolset, message, header) ?? envelope;
    const id = 'id' in message ? message.id : null;
    if (isRejection(envelope))
      return this.refuse(
        exchange,
        res,
        jsonRpcError(id, envelope.code, envelope.message, envelope.data),
        envelope.status,
      );
    if (!('id' in message)) {
      // No client notification is defined over HTTP on this revision (closing the stream cancels).
      await this.audit.record(exchange, 202, null, null);
      return sendEmpty(res, 202);
    }
    if (message.method === McpMethod.SubscriptionsListen) return this.listen(message, envelope, exchange, http, res);
    const stream = new StatelessResponseStream(res, http.acceptsEventStream);
    const response = await this.respond(message, envelope, stream, res, exchange, http);
    const status = stream.effectiveStatus(McpStatelessAudit.statusOf(response));
    const json = JSON.stringify(response);
    await this.audit.answered(exchange, response, json, http.deadlineFired, status);
    stream.finish(status, json, httpHeadersOf(response));
  }

  /**
   * Opens a `subscriptions/listen` stream. Its audit row is written when the stream opens, before
   * the acknowledgment leaves (status 200, the acknowledgment as the response): the trail shows
   * who listens to what even if the stream outlives the process; its end is not recorded.
   */
  private async listen(
    request: JsonRpcRequest,
    envelope: StatelessEnvelope,
    exchange: StatelessExchange,
    http: McpHttpExchange,
    res: ServerResponse,
  ): Promise<void> {
    if (!http.acceptsEventStream) {
      const error = jsonRpcError(
        request.id,
        JsonRpcErrorCode.InvalidRequest,
        'Invalid request: subscriptions/listen answers with an event stream; send Accept: text/event-stream',
      );
      return this.refuse(exchange, res, error, httpStatusForError(JsonRpcErrorCode.InvalidRequest));
    }
    const filter = await this.agreement.agree(request, envelope, exchange.principal);
    if (isListenRefusal(filter)) return this.refuse(exchange, res, filter.response, filter.status);
    await this.audit.record(exchange, 200, JSON.stringify(acknowledgment(request.id, filter)), null);
    if (res.destroyed || res.writableEnded) return;
    this.agreement.open(request, filter, sseListenSink(res, this.options.streams.maxBufferedBytes), exchange.principal);
  }

  private async refuse(
    exchange: StatelessExchange,
    res: ServerResponse,
    response: JsonRpcResponse & { error: { code: number } },
    status: number,
  ): Promise<void> {
    const json = JSON.stringify(response);
    await this.audit.record(exchange, status, json, response.error.code);
    sendJsonText(res, status, json);
  }

  private async respond(
    request: JsonRpcRequest,
    envelope: StatelessEnvelope,
    stream: StatelessResponseStream,
    res: ServerResponse,
    exchange: StatelessExchange,
    http: McpHttpExchange,
  ): Promise<JsonRpcResponse> {
    http.watch(res, 'The client closed the response stream');
    try {
      return await this.responder.respond({
        request,
        envelope,
        principal: http.principal,
        abort: http.abort,
        inFlight: http.inFlight,
        notify: stream.canNotify ? (notification) => stream.notify(notification) : undefined,
      });
    } catch (error) {
      await this.audit.failed(exchange, error);
      throw error;
    } finally {
      http.unwatch(res);
    }
  }
}
