import type { McpPrincipal } from '../../interfaces/principal.interface';
import {
  JsonRpcErrorCode,
  jsonRpcError,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
} from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { envelopeVersionOf } from '../../protocol/stateless';
import { isListenRefusal, type McpListenAgreement } from '../http/mcp-listen-agreement';
import type { McpStatelessAudit, StatelessExchange } from '../http/mcp-stateless-audit';
import { LazyAbort } from '../pipeline/lazy-abort';
import type { McpInFlightRequest } from '../shutdown/mcp-drain.service';
import { acknowledgment, type ListenSink } from '../stateless/listen-stream-registry';
import { isRejection, readStatelessEnvelope, type StatelessEnvelope } from '../stateless/stateless-envelope';
import type { McpStatelessResponder } from '../stateless/stateless-responder';

/** What the stateless messages of a stdio connection are served by: the parts the HTTP stateless path uses. */
export interface McpStdioStatelessParts {
  responder: McpStatelessResponder;
  audit: McpStatelessAudit;
  listen: McpListenAgreement;
}

/** A stateless request of the connection whose handler runs now. */
interface RunningRequest {
  abort: LazyAbort;
  /** Set by the client's `notifications/cancelled`: no frame of the request may follow. */
  cancelled: boolean;
}

/**
 * A `subscriptions/listen` stream of the connection: its messages are frames of the shared
 * channel, tagged with the subscription id by the registry. Once it is cancelled or ended nothing
 * more of it is written.
 */
class StdioListenSink implements ListenSink {
  private closed = false;
  private closer: ((graceful: boolean) => void) | null = null;

  constructor(
    private readonly write: (json: string) => void,
    private readonly forget: () => void,
  ) {}

  send(message: object): void {
    if (!this.closed) this.write(JSON.stringify(message));
  }

  end(response: object | null): void {
    if (this.closed) return;
    this.closed = true;
    this.forget();
    if (response) this.write(JSON.stringify(response));
  }

  /** True once the client cancelled the subscription or it ended. */
  get isClosed(): boolean {
    return this.closed;
  }

  onClose(listener: (graceful: boolean) => void): void {
    this.closer = listener;
  }

  /** The client cancelled the subscription (`false`: no answer), or the connection ends (`true`: the graceful-closure response). */
  close(graceful: boolean): void {
    if (!graceful) {
      this.closed = true;
      this.forget();
    }
    this.closer?.(graceful);
  }
}

function keyOf(id: JsonRpcId): string {
  return `${typeof id}:${String(id)}`;
}

/** The key of the request a `notifications/cancelled` names, or null when it names none. */
function cancelledKey(notification: JsonRpcNotification): string | null {
  const requestId = notification.params?.requestId;
  return typeof requestId === 'string' || typeof requestId === 'number' ? keyOf(requestId) : null;
}

/**
 * The stateless (2026-07-28) side of one stdio connection: each request carries its revision and
 * capabilities in `_meta` and is answered on its own, without the connection's session, by the
 * stages the Streamable HTTP stateless path uses (`McpStatelessResponder`: the method's revision,
 * `server/discover`, `input_required` rounds, the decorated result) and audited as that path
 * audits (`McpStatelessAudit`: no session, the revision, the status HTTP would have answered).
 * Only the carrier differs: the body is the whole metadata (there is no header layer),
 * notifications of a request are frames of their own, a `subscriptions/listen` stream's messages
 * are frames tagged with its id, and the client cancels a request or a subscription with
 * `notifications/cancelled`, after which nothing more of it is written.
 */
export class McpStdioStateless {
  private readonly running = new Map<string, RunningRequest>();
  private readonly listening = new Map<string, StdioListenSink>();
  private ended = false;

  constructor(
    private readonly parts: McpStdioStatelessParts,
    private readonly principal: McpPrincipal,
    private readonly send: (json: string) => void,
  ) {}

  /**
   * True when a message takes the stateless path: it carries the `_meta` envelope, it is a
   * request of the stateless revision only (`server/discover`, `subscriptions/listen`: without
   * the envelope it is refused as the revision refuses a malformed one), or it cancels a
   * stateless request of this connection that still runs or a subscription it holds open.
   */
  accepts(message: JsonRpcRequest | JsonRpcNotification): boolean {
    if (envelopeVersionOf(message.params) !== null) return true;
    if ('id' in message)
      return message.method === McpMethod.ServerDiscover || message.method === McpMethod.SubscriptionsListen;
    if (message.method !== McpMethod.Cancelled) return false;
    const key = cancelledKey(message);
    return key !== null && (this.running.has(key) || this.listening.has(key));
  }

  /**
   * Ends the connection's listen streams with the graceful-closure response (the server ends
   * them); a request read later is not served a new one.
   */
  end(): void {
    this.ended = true;
    for (const sink of [...this.listening.values()]) sink.close(true);
  }

  /** Serves one stateless message; resolves once its audit row is written and its answer sent. */
  async handle(
    message: JsonRpcRequest | JsonRpcNotification,
    text: string,
    startedAt: Date,
    inFlight: McpInFlightRequest | null,
  ): Promise<void> {
    const { audit } = this.parts;
    const exchange: StatelessExchange = {
      message,
      text,
      principal: this.principal,
      startedAt,
      version: envelopeVersionOf(message.params),
    };
    if (!('id' in message)) {
      this.cancel(message);
      return audit.record(exchange, 202, null, null);
    }
    const envelope = readStatelessEnvelope(message, null);
    if (isRejection(envelope))
      return this.refuse(exchange, message.id, envelope.code, envelope.message, envelope.status, envelope.data);
    if (message.method === McpMethod.SubscriptionsListen) return this.listen(exchange, message, envelope);
    const key = keyOf(message.id);
    const running: RunningRequest = { abort: inFlight?.abort ?? new LazyAbort(), cancelled: false };
    this.running.set(key, running);
    let response;
    try {
      response = await this.parts.responder.respond({
        request: message,
        envelope,
        principal: this.principal,
        abort: running.abort,
        inFlight,
        notify: (notification) => {
          if (!running.abort.aborted) this.send(JSON.stringify(notification));
        },
      });
    } catch (error) {
      await audit.failed(exchange, error);
      throw error;
    } finally {
      if (this.running.get(key) === running) this.running.delete(key);
    }
    const json = JSON.stringify(response);
    await audit.answered(exchange, response, json, inFlight?.deadlineFired === true);
    if (!running.cancelled) this.send(json);
  }

  /**
   * `notifications/cancelled` aborts the request it names if it still runs here, or ends the
   * subscription it names; either way nothing more of it is written.
   */
  private cancel(notification: JsonRpcNotification): void {
    const key = notification.method === McpMethod.Cancelled ? cancelledKey(notification) : null;
    if (key === null) return;
    this.listening.get(key)?.close(false);
    const running = this.running.get(key);
    if (!running) return;
    const reason = notification.params?.reason;
    running.cancelled = true;
    running.abort.abort(new Error(typeof reason === 'string' ? reason : 'Cancelled by the client'));
  }

  /**
   * Opens a `subscriptions/listen` stream on the connection, agreed and audited as over HTTP (the
   * row written as it opens, with the acknowledgment as its response).
   */
  private async listen(
    exchange: StatelessExchange,
    request: JsonRpcRequest,
    envelope: StatelessEnvelope,
  ): Promise<void> {
    const { listen, audit } = this.parts;
    const key = keyOf(request.id);
    if (this.ended || this.listening.has(key)) {
      // Two open subscriptions with one id could not be told apart on the shared channel.
      const reason = this.ended
        ? 'Invalid request: the connection is ending'
        : 'Invalid request: a subscription with this id is open on this connection; use another request id';
      return this.refuse(exchange, request.id, JsonRpcErrorCode.InvalidRequest, reason, 400);
    }
    // Held from now on, so that a second request with the same id meets it while this one is agreed.
    const sink = new StdioListenSink(this.send, () => {
      if (this.listening.get(key) === sink) this.listening.delete(key);
    });
    this.listening.set(key, sink);
    let filter;
    try {
      filter = await listen.agree(request, envelope, this.principal);
    } catch (error) {
      this.listening.delete(key);
      throw error;
    }
    if (isListenRefusal(filter)) {
      this.listening.delete(key);
      const json = JSON.stringify(filter.response);
      await audit.record(exchange, filter.status, json, filter.response.error.code);
      return this.send(json);
    }
    await audit.record(exchange, 200, JSON.stringify(acknowledgment(request.id, filter)), null);
    // Cancelled by the client while it was agreed: nothing of it may be written.
    if (sink.isClosed) return;
    listen.open(request, filter, sink, this.principal);
    // The connection ended while the subscription was agreed: the server ends it at once.
    if (this.ended) sink.close(true);
  }

  private async refuse(
    exchange: StatelessExchange,
    id: JsonRpcId,
    code: number,
    message: string,
    status: number,
    data?: unknown,
  ): Promise<void> {
    const json = JSON.stringify(jsonRpcError(id, code, message, data));
    await this.parts.audit.record(exchange, status, json, code);
    this.send(json);
  }
}
