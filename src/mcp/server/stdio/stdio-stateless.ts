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
import type { McpStatelessAudit, StatelessExchange } from '../http/mcp-stateless-audit';
import { LazyAbort } from '../pipeline/lazy-abort';
import type { McpInFlightRequest } from '../shutdown/mcp-drain.service';
import { isRejection, readStatelessEnvelope } from '../stateless/stateless-envelope';
import type { McpStatelessResponder } from '../stateless/stateless-responder';

/** What the stateless messages of a stdio connection are served by: the parts the HTTP stateless path uses. */
export interface McpStdioStatelessParts {
  responder: McpStatelessResponder;
  audit: McpStatelessAudit;
}

/** A stateless request of the connection whose handler runs now. */
interface RunningRequest {
  abort: LazyAbort;
  /** Set by the client's `notifications/cancelled`: no frame of the request may follow. */
  cancelled: boolean;
}

function keyOf(id: JsonRpcId): string {
  return `${typeof id}:${String(id)}`;
}

/**
 * The stateless (2026-07-28) side of one stdio connection: each request carries its revision and
 * capabilities in `_meta` and is answered on its own, without the connection's session, by the
 * stages the Streamable HTTP stateless path uses (`McpStatelessResponder`: the method's revision,
 * `server/discover`, `input_required` rounds, the decorated result) and audited as that path
 * audits (`McpStatelessAudit`: no session, the revision, the status HTTP would have answered).
 * Only the carrier differs: the body is the whole metadata (there is no header layer),
 * notifications of a request are frames of their own, and the client cancels with
 * `notifications/cancelled`, after which nothing more of the request is written.
 */
export class McpStdioStateless {
  private readonly running = new Map<string, RunningRequest>();

  constructor(
    private readonly parts: McpStdioStatelessParts,
    private readonly principal: McpPrincipal,
    private readonly send: (json: string) => void,
  ) {}

  /**
   * True when a message takes the stateless path: it carries the `_meta` envelope, it is a
   * request of the stateless revision only (`server/discover`, `subscriptions/listen`: without
   * the envelope it is refused as the revision refuses a malformed one), or it cancels a
   * stateless request of this connection that still runs.
   */
  accepts(message: JsonRpcRequest | JsonRpcNotification): boolean {
    if (envelopeVersionOf(message.params) !== null) return true;
    if ('id' in message)
      return message.method === McpMethod.ServerDiscover || message.method === McpMethod.SubscriptionsListen;
    return message.method === McpMethod.Cancelled && this.runningRequest(message) !== undefined;
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
    if (message.method === McpMethod.SubscriptionsListen) {
      return this.refuse(
        exchange,
        message.id,
        JsonRpcErrorCode.MethodNotFound,
        'Method not found: subscriptions/listen is not served over stdio by this server; use Streamable HTTP to listen',
        404,
      );
    }
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

  private runningRequest(notification: JsonRpcNotification): RunningRequest | undefined {
    const requestId = notification.params?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return undefined;
    return this.running.get(keyOf(requestId));
  }

  /** `notifications/cancelled` aborts the request it names, if it still runs here. */
  private cancel(notification: JsonRpcNotification): void {
    if (notification.method !== McpMethod.Cancelled) return;
    const running = this.runningRequest(notification);
    if (!running) return;
    const reason = notification.params?.reason;
    running.cancelled = true;
    running.abort.abort(new Error(typeof reason === 'string' ? reason : 'Cancelled by the client'));
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
