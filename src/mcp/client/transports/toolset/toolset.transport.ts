import type { McpDeliveryContext, McpMessageHandler } from '../../../interfaces/mcp-delivery.interface';
import type { McpPrincipal } from '../../../interfaces/principal.interface';
import { McpProtocolError, McpTimeoutError, McpTransportError } from '../../../errors/mcp-client.errors';
import type { JsonRpcNotification, JsonRpcRequest } from '../../../protocol/jsonrpc';
import { McpMethod } from '../../../protocol/mcp-methods';
import { LATEST_SESSION_PROTOCOL_VERSION } from '../../../protocol/revisions';
import type {
  McpHandshakeInfo,
  McpTransport,
  McpTransportDeliverOptions,
  McpTransportResult,
} from '../mcp-transport.interface';

/** Options of a `ToolsetTransport`. */
export interface ToolsetTransportOptions {
  /** Finds the mount's message handler (its `Toolset`); called on each delivery. */
  resolveHandler: () => McpMessageHandler;
  /** Who the calls are made as. */
  principal: McpPrincipal;
  /** `clientInfo` of the in-process handshake. @default { name: 'durable-mcp', version: '0.1.0' } */
  clientInfo?: Record<string, unknown>;
}

/**
 * Calls a toolset of this app in-process, through the same `deliver` its HTTP endpoint uses, so
 * local and remote behaviour cannot drift. No session: the first delivery without a known
 * revision performs an in-process `initialize` and reports the handshake.
 */
export class ToolsetTransport implements McpTransport {
  constructor(private readonly options: ToolsetTransportOptions) {}

  /** @inheritdoc */
  async deliver(
    message: JsonRpcRequest | JsonRpcNotification,
    options: McpTransportDeliverOptions,
  ): Promise<McpTransportResult> {
    const rawRequest = JSON.stringify(message);
    const { context } = options;
    const handler = this.options.resolveHandler();
    let handshake: McpHandshakeInfo | undefined;
    const protocolVersion = options.protocolVersion ?? (handshake = await this.handshake(handler)).protocolVersion;
    if (handshake) context.onHandshake?.(handshake);
    const abort = new AbortController();
    const delivery: McpDeliveryContext = {
      principal: this.options.principal,
      sessionId: null,
      protocolVersion,
      signal: abort.signal,
    };
    const isRequest = 'id' in message && message.id !== undefined;
    let timer: NodeJS.Timeout | undefined;
    let onAbort = () => abort.abort(context.signal?.reason);
    try {
      const expired = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => {
            abort.abort(new Error('timeout'));
            reject(
              new McpTimeoutError(
                `${message.method} on "${context.server}" timed out after ${context.timeoutMs} ms`,
                true,
                context.timeoutMs,
              ),
            );
          },
          Math.min(
            context.timeoutMs,
            context.deadlineAt === undefined ? Infinity : Math.max(0, context.deadlineAt - Date.now()),
          ),
        );
        // The caller's abort stops the wait too: the handler may not end on its signal.
        onAbort = () => {
          abort.abort(context.signal?.reason);
          reject(
            new McpTransportError(`The call to the toolset of "${context.server}" was aborted by the caller`, true),
          );
        };
        if (context.signal?.aborted) onAbort();
        else context.signal?.addEventListener('abort', onAbort, { once: true });
      });
      const body = await Promise.race([handler.deliver(message, delivery), expired]);
      if (isRequest && !body)
        throw new McpProtocolError(`The toolset of "${context.server}" did not answer ${message.method}`, true);
      return {
        body: body,
        sessionId: null,
        handshake,
        rawRequest,
        rawResponse: body ? JSON.stringify(body) : null,
        status: null,
        stderr: '',
      };
    } catch (error) {
      if (
        error instanceof McpTimeoutError ||
        error instanceof McpProtocolError ||
        (error instanceof McpTransportError && context.signal?.aborted)
      ) {
        if (isRequest)
          await this.cancel(
            handler,
            delivery,
            message.id,
            context.signal?.aborted ? 'aborted by the caller' : 'timeout',
            context,
          );
        throw error;
      }
      throw new McpTransportError(`The toolset of "${context.server}" failed: ${(error as Error).message}`, true);
    } finally {
      clearTimeout(timer);
      context.signal?.removeEventListener('abort', onAbort);
    }
  }

  private async handshake(handler: McpMessageHandler): Promise<McpHandshakeInfo> {
    const request: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: 0,
      method: McpMethod.Initialize,
      params: {
        protocolVersion: LATEST_SESSION_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: this.options.clientInfo ?? { name: 'durable-mcp', version: '0.1.0' },
      },
    };
    const context: McpDeliveryContext = {
      principal: this.options.principal,
      sessionId: null,
      protocolVersion: LATEST_SESSION_PROTOCOL_VERSION,
    };
    const response = await handler.deliver(request, context);
    if (!response || !('result' in response)) {
      throw new McpProtocolError(
        `In-process initialize failed: ${JSON.stringify(response && 'error' in response ? response.error : null)}`,
        false,
      );
    }
    const result = response.result;
    return {
      protocolVersion: String(result.protocolVersion),
      serverInfo: (result.serverInfo as Record<string, unknown>) ?? null,
      capabilities: (result.capabilities as Record<string, unknown>) ?? null,
      ...(typeof result.instructions === 'string' ? { instructions: result.instructions } : {}),
    };
  }

  private async cancel(
    handler: McpMessageHandler,
    context: McpDeliveryContext,
    requestId: string | number,
    reason: string,
    call: McpTransportDeliverOptions['context'],
  ): Promise<void> {
    const notice: JsonRpcNotification = { jsonrpc: '2.0', method: McpMethod.Cancelled, params: { requestId, reason } };
    const failure = await handler.deliver(notice, context).then(
      () => undefined,
      (error: unknown) => error,
    );
    try {
      call.onCancelNotice?.(notice, failure);
    } catch {
      // An observer cannot change the call's outcome.
    }
  }
}
