import { Inject, Injectable } from '@nestjs/common';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import {
  JsonRpcErrorCode,
  jsonRpcError,
  jsonRpcResult,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { existsInRevision, methodFacts } from '../../protocol/method-catalog';
import { StatelessRetryParam } from '../../protocol/stateless';
import type { McpResolvedOptions } from '../config/mcp.options';
import { Toolset } from '../dispatch/toolset';
import { SourcedDelivery, type LazyAbort } from '../pipeline/lazy-abort';
import type { McpInFlightRequest } from '../shutdown/mcp-drain.service';
import { abortedAtShutdown } from '../shutdown/shutdown-answers';
import { InputRequiredSignal, type StatelessInputChannel } from './input-channel';
import { MrtrRounds } from './mrtr-rounds';
import type { StatelessEnvelope } from './stateless-envelope';
import { decorateResult, discoverResult } from './stateless-results';
import { askRequiredUrlElicitations } from './url-elicitations-required';

/** One stateless request whose envelope was read and accepted, whatever transport carried it. */
export interface StatelessCall {
  request: JsonRpcRequest;
  envelope: StatelessEnvelope;
  principal: McpPrincipal;
  /** Aborts the handling: the client gone or cancelling, the drain deadline. */
  abort: LazyAbort;
  /** The drain's tracking of the request (null when the transport does not track it). */
  inFlight: McpInFlightRequest | null;
  /** Sends a notification of the request (progress, log) before its response; absent when none can reach the client. */
  notify?: (notification: JsonRpcNotification) => void;
}

/**
 * The answer to one stateless (2026-07-28) request, shared by every transport that carries the
 * revision (Streamable HTTP, stdio): the revision check of the method, `server/discover`, the
 * multi round-trip rounds (`input_required` for elicitation, sampling and roots), the call through
 * `Toolset.deliver` and the decoration of the result (`resultType`, `serverInfo`, cache hints).
 * What differs between transports (how the envelope was read, how notifications and the
 * response travel, the audit row) stays with the caller.
 */
@Injectable()
export class McpStatelessResponder {
  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly toolset: Toolset,
    private readonly rounds: MrtrRounds,
  ) {}

  /**
   * Answers the request. A refusal or a handler's failure is a JSON-RPC error response; a
   * failure of the server itself (a database outage) is thrown, for the caller to audit and
   * answer as its transport does.
   */
  async respond(call: StatelessCall): Promise<JsonRpcResponse> {
    const { request, envelope, principal } = call;
    // A session-era request gets the same -32601 as an unknown method, naming the revision.
    if (methodFacts(request.method)?.kind === 'request' && !existsInRevision(request.method, envelope.version)) {
      return jsonRpcError(
        request.id,
        JsonRpcErrorCode.MethodNotFound,
        `Method not found: ${request.method} does not exist on revision ${envelope.version}`,
      );
    }
    if (request.method === McpMethod.ServerDiscover) return this.complete(request, discoverResult(this.toolset), false);
    let channel: StatelessInputChannel | undefined;
    try {
      channel = this.rounds.open(request, principal);
    } catch (error) {
      if (error instanceof McpRpcError) return { jsonrpc: '2.0', id: request.id, error: error.toJsonRpc() };
      throw error;
    }
    const response = askRequiredUrlElicitations(
      await this.deliver(call, channel),
      channel,
      envelope.clientCapabilities,
    );
    if (channel?.needsInput)
      return this.complete(request, this.rounds.inputRequired(channel, request, principal), true);
    if (!response || !('result' in response))
      return response ?? jsonRpcError(request.id, JsonRpcErrorCode.InternalError, 'Internal error: no response');
    const retried = request.params?.[StatelessRetryParam.RequestState] !== undefined;
    return this.complete(request, response.result, retried);
  }

  private async deliver(
    call: StatelessCall,
    channel: StatelessInputChannel | undefined,
  ): Promise<JsonRpcResponse | null> {
    const { request, envelope } = call;
    try {
      return await abortedAtShutdown(
        call.inFlight,
        request,
        this.toolset.deliver(
          request,
          new SourcedDelivery(
            {
              principal: call.principal,
              sessionId: null,
              protocolVersion: envelope.version,
              clientCapabilities: envelope.clientCapabilities,
              logLevel: envelope.logLevel,
              notify: call.notify,
              client: channel,
            },
            call.abort,
          ),
        ),
      );
    } catch (error) {
      if (error instanceof InputRequiredSignal && channel?.needsInput) return null;
      throw error;
    }
  }

  private complete(request: JsonRpcRequest, result: Record<string, unknown>, retried: boolean): JsonRpcResponse {
    return jsonRpcResult(request.id, decorateResult(request.method, result, this.toolset, this.options, retried));
  }
}
