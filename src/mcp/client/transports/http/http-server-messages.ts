import { McpTransportError } from '../../../errors/mcp-client.errors';
import { McpRpcError } from '../../../errors/mcp-rpc.errors';
import {
  JsonRpcErrorCode,
  jsonRpcError,
  jsonRpcResult,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../../protocol/jsonrpc';
import { McpMethod } from '../../../protocol/mcp-methods';
import type { McpNotificationOrigin } from '../mcp-transport.interface';
import type { HttpCall } from './http-call';
import { discardBody, readBodyPrefix } from './http-body-prefix';
import { excerpt } from './raw-recorder';
import { type HttpSession, type HttpWire } from './http-wire';

/**
 * Handles what the server sends on a POST's SSE stream besides our response (or on the
 * session's standalone GET stream during a call): notifications go
 * to `onNotification`; requests are answered through `onServerRequest` (ping always with `{}`,
 * -32601 when no handler) and the answer is POSTed back to the endpoint in the same session.
 */
export class HttpServerMessages {
  private readonly replies: Promise<void>[] = [];

  constructor(
    private readonly wire: HttpWire,
    private readonly call: HttpCall,
    private readonly session: HttpSession | null,
    /** Whether these messages arrive on the call's own stream or on the session's shared one. */
    private readonly origin: McpNotificationOrigin = 'request',
  ) {}

  /**
   * Passes a notification on. A handler that throws does not break the call: the notification
   * was received, and what the observer does with it is not the server's concern.
   */
  notify(notification: JsonRpcNotification): void {
    try {
      this.call.context.onNotification?.(notification, this.origin);
    } catch {
      // Deliberately ignored; see above.
    }
  }

  /** Starts answering a server->client request; the answer is sent when it is ready. */
  answer(request: JsonRpcRequest): void {
    const reply = this.respond(request).then((response) => this.post(request, response));
    this.replies.push(reply.catch((error: unknown) => this.fail(request, error)));
  }

  /** Waits until every answer started so far was sent. */
  async settle(): Promise<void> {
    await Promise.all(this.replies);
  }

  private async respond(request: JsonRpcRequest): Promise<JsonRpcResponse> {
    if (request.method === McpMethod.Ping) return jsonRpcResult(request.id, {});
    const handler = this.call.context.onServerRequest;
    if (!handler)
      return jsonRpcError(request.id, JsonRpcErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    try {
      return jsonRpcResult(request.id, await handler(request));
    } catch (error) {
      if (error instanceof McpRpcError) return { jsonrpc: '2.0', id: request.id, error: error.toJsonRpc() };
      const message = error instanceof Error ? error.message : String(error);
      return jsonRpcError(request.id, JsonRpcErrorCode.InternalError, message);
    }
  }

  private async post(request: JsonRpcRequest, response: JsonRpcResponse): Promise<void> {
    if (this.call.stopped) return;
    const reply = await this.wire.send({
      method: 'POST',
      session: this.session,
      signal: this.call.signal,
      body: JSON.stringify(response),
    });
    if (reply.ok) return discardBody(reply);
    const text = await readBodyPrefix(reply);
    throw new McpTransportError(
      `HTTP ${reply.status} ${excerpt(this.wire.secrets.redact(text))}`.trim(),
      true,
      reply.status,
    );
  }

  private fail(request: JsonRpcRequest, error: unknown): void {
    if (this.call.stopped) return;
    const detail = this.wire.secrets.redact(error instanceof Error ? error.message : String(error));
    const status = error instanceof McpTransportError ? error.status : undefined;
    const message = `Could not answer the "${request.method}" request of MCP server "${this.call.context.server}" (${this.wire.endpointLabel}): ${detail}`;
    this.call.fail(new McpTransportError(message, true, status));
  }
}
