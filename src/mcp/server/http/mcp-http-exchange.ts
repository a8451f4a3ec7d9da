import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { McpClientChannel, McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import type { McpEventInput } from '../../persistence/interfaces/mcp-event-sink.interface';
import type { McpInboundSessionRecord } from '../../persistence/interfaces/mcp-session-store.interface';
import { JsonText } from '../../persistence/json-text';
import type { ClassifiedMessage, JsonRpcNotification, JsonRpcRequest } from '../../protocol/jsonrpc';
import { methodFacts, type McpMethodFacts } from '../../protocol/method-catalog';
import { McpHeader } from '../../protocol/mcp-methods';
import type { McpExchangeSpan } from '../../telemetry/mcp-spans';
import { LazyAbort } from '../pipeline/lazy-abort';
import type { McpInFlightRequest } from '../shutdown/mcp-drain.service';
import type { TrackedRequest } from '../sessions/mcp-stream-registry';
import { acceptsEventStream } from '../sessions/mcp-sse-writer';
import { sessionEvent } from '../sessions/session-events';
import { headerValue } from './mcp-http-checks';
import { McpSessionChannel, type McpSessionChannelSettings } from './mcp-session-channel';

/** A parsed message the endpoint handles (an invalid one is answered before an exchange exists). */
export type McpValidMessage = Exclude<ClassifiedMessage, { kind: 'invalid' }>;

const EXCHANGE = Symbol('durable-mcp exchange');

type WatchedResponse = ServerResponse & { [EXCHANGE]?: McpHttpExchange | null };

/**
 * The 'close' listener of every watched response (one function for all, `this` is the response).
 * A response is watched only while its handler runs, before the answer is written, so a close
 * then means the client went away.
 */
function onResponseClose(this: WatchedResponse): void {
  const exchange = this[EXCHANGE] as McpHttpExchange;
  exchange.abort.abort(new Error(exchange.closeReason));
}

/**
 * The `notify` of a delivery context `offerChannel` gave a channel, called as the context's method
 * (its `client` is the exchange): one function for every context, where a closure per request
 * measured as more memory kept and more time in the garbage collector at one connection.
 */
function notifyOnChannel(this: { client: McpHttpExchange }, notification: JsonRpcNotification): void {
  this.client.openChannel().notify(notification);
}

/**
 * One POSTed message, from the edge of the endpoint to its audit row: built once when the body is
 * parsed and passed to every stage instead of long parameter lists. It holds who sent it, the
 * headers the stages need (each read once), the message and the facts the method catalog knows of
 * it, the session once found, the SERVER span, the drain's tracking and one abort source fed by
 * every reason to stop: the client going away, the drain deadline, the end of the session. Nothing
 * is made that the request does not use: the abort source makes a signal only when read, the
 * response's 'close' listener and the session's tracking are shared functions and this object.
 */
export class McpHttpExchange implements TrackedRequest, McpClientChannel {
  /** When the request arrived (the audit row's `createdAt`). */
  readonly startedAt = new Date();
  /** The authenticated caller. */
  readonly principal: McpPrincipal;
  /** The `Mcp-Session-Id` header. */
  readonly sessionIdHeader: string | undefined;
  /** The `MCP-Protocol-Version` header. */
  readonly protocolVersionHeader: string | undefined;
  /** The message's method (null for a client's response). */
  readonly method: string | null;
  /** What the method catalog knows of the method (undefined for a response or a custom method). */
  readonly facts: McpMethodFacts | undefined;
  /** Aborts the handling: client gone, drain deadline, session ended. */
  readonly abort = new LazyAbort();
  /** The drain's tracking of a request (null for a notification or a response, and when refused). */
  inFlight: McpInFlightRequest | null = null;
  /** The session, once found (session path only). */
  session: McpInboundSessionRecord | null = null;
  /** The key of the principal that holds the session, once found (the stream registry's tracking). */
  principalKey = '';
  /** The answer's SSE channel, once the handler sent something before its response (session path). */
  channel: McpSessionChannel | null = null;
  private channelRes: ServerResponse | null = null;
  private channelSettings: McpSessionChannelSettings | null = null;
  /** The SERVER span of the exchange (set right after the exchange is built: it reads the headers from here); null while no OpenTelemetry SDK records. */
  span: McpExchangeSpan | null = null;
  /** What the abort says when the client closes the response before it finished. */
  closeReason = 'The client closed the connection';
  private eventStream: boolean | undefined;

  constructor(
    /** The request's headers, for the rare stage that reads one more (a stateless call's routing headers). */
    readonly headers: IncomingHttpHeaders,
    principal: McpPrincipal | undefined,
    /** The `Accept` header (the edge read it to check it). */
    readonly accept: string | undefined,
    /** The parsed message. */
    readonly classified: McpValidMessage,
    /** The body exactly as received (the audit row's request). */
    readonly text: string,
  ) {
    this.principal = principal as McpPrincipal;
    this.sessionIdHeader = headerValue(headers, McpHeader.SessionId);
    this.protocolVersionHeader = headerValue(headers, McpHeader.ProtocolVersion);
    const message = classified.message;
    this.method = 'method' in message ? message.method : null;
    this.facts = this.method === null ? undefined : methodFacts(this.method);
  }

  /** True when the client accepts an SSE answer (`Accept: text/event-stream`). */
  get acceptsEventStream(): boolean {
    return (this.eventStream ??= acceptsEventStream(this.accept));
  }

  /** True once the drain deadline aborted the request: its audit row says so. */
  get deadlineFired(): boolean {
    return this.inFlight?.deadlineFired === true;
  }

  /** Records the session the message belongs to (found by the session path). */
  joined(session: McpInboundSessionRecord): void {
    this.session = session;
    this.principalKey = session.principalKey;
  }

  /**
   * The audit row of this exchange on its session (found or just opened): the message as
   * received plus `fields`, whose outcome is noted on the span as well.
   */
  sessionRow(
    mount: string,
    session: McpInboundSessionRecord,
    fields: Partial<McpEventInput> & Pick<McpEventInput, 'status'>,
  ): McpEventInput {
    const response = fields.response instanceof JsonText ? fields.response.text : fields.response;
    this.span?.note({
      status: fields.status,
      errorCode: fields.errorCode ?? null,
      isError: fields.isError === true,
      response,
    });
    return sessionEvent(mount, session, this.startedAt, {
      kind: this.classified.kind,
      method: this.method,
      request: new JsonText(this.text),
      ...fields,
    });
  }

  /**
   * Gives `context` (the delivery of this session request) its way back to the client on `res`:
   * `client` is this exchange and `notify` sends on the answer's SSE channel, which is made on the
   * first notification or request the handler sends, not before. `notify` is called as the
   * context's method, as the handler context does.
   */
  offerChannel<T extends McpDeliveryContext>(context: T, res: ServerResponse, settings: McpSessionChannelSettings): T {
    this.channelRes = res;
    this.channelSettings = settings;
    context.notify = notifyOnChannel;
    context.client = this;
    return context;
  }

  /** The answer's SSE channel, made now if it was not (after `offerChannel`). */
  openChannel(): McpSessionChannel {
    this.channel ??= new McpSessionChannel(
      this.channelRes as ServerResponse,
      (this.session as McpInboundSessionRecord).sessionId,
      (this.classified.message as JsonRpcRequest).id,
      this.abort,
      this.channelSettings as McpSessionChannelSettings,
    );
    return this.channel;
  }

  /** @inheritdoc */
  request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.openChannel().request(method, params);
  }

  /** The session ended while the request ran: aborts it and ends its stream. */
  close(): void {
    this.abort.abort(new Error('The session ended'));
    this.channel?.close();
  }

  /** Aborts the handling when `res` closes before it finished, until `unwatch`. */
  watch(res: ServerResponse, reason?: string): void {
    if (reason !== undefined) this.closeReason = reason;
    (res as WatchedResponse)[EXCHANGE] = this;
    res.on('close', onResponseClose);
  }

  /** Stops watching `res`. */
  unwatch(res: ServerResponse): void {
    res.off('close', onResponseClose);
    (res as WatchedResponse)[EXCHANGE] = null;
  }
}
