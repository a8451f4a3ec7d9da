import { Injectable } from '@nestjs/common';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { JsonRpcErrorCode, type JsonRpcRequest } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { CLIENT_CAPABILITY_OF_REQUEST } from '../../protocol/method-catalog';
import { elicitationCapabilityFor, type McpElicitationMode } from '../../protocol/elicitation';
import type { McpClientHandlerKind } from '../interfaces/mcp-client-handlers.interface';
import type { McpCallServerRequestHandler } from '../interfaces/mcp-call.interface';
import type { McpServerCommonConfig } from '../interfaces/mcp-server-config.interface';
import type { McpServerRequestHandler } from '../transports/mcp-transport.interface';
import { McpClientHandlerExplorer } from './client-handler.explorer';
import { withElicitationDefaults } from './elicitation-defaults';
import { samplingCapabilityFor, samplingToolParams } from '../../protocol/sampling';

/** What a call with its own `onServerRequest` answers, announced on the handshakes it makes. */
const CALL_ANSWER_CAPABILITIES: Readonly<Record<string, unknown>> = Object.freeze({
  roots: { listChanged: false },
  sampling: {},
  elicitation: {},
});

/** The handler kind that answers an elicitation in each mode. */
const ELICITATION_HANDLER: Record<McpElicitationMode, McpClientHandlerKind> = {
  form: 'elicitation',
  url: 'urlElicitation',
};

/**
 * Answers the requests a server sends during a call (`ping`, `roots/list`,
 * `sampling/createMessage`, `elicitation/create`) with the registered handlers; a method without
 * a handler gets -32601. `elicitation/create` goes to the handler of its mode (`elicitation` for
 * forms, `urlElicitation` for URLs); a mode without one gets -32602, and so does a sampling request with `tools` or
 * `toolChoice` when the sampling handler did not declare tool support. An accepted form gets the
 * schema's defaults for the fields the handler left out (SEP-1034), whichever transport carried
 * the request.
 */
@Injectable()
export class McpServerRequestDispatcher {
  constructor(private readonly handlers: McpClientHandlerExplorer) {}

  /**
   * Client capabilities to announce: one entry per capability that has a handler; `elicitation`
   * names URL mode only when a URL elicitation handler is registered, `sampling` names `tools`
   * only when the sampling handler accepts tool use. With `callAnswers` (a call with its own
   * `onServerRequest`), roots, sampling and form elicitation are announced too, for the
   * handshakes that call makes itself; `announce` (a server's option) adds those it names, for
   * handshakes shared by many calls. The app-wide handlers' richer entries win.
   */
  capabilities(callAnswers = false, announce?: McpServerCommonConfig.Announce): Record<string, unknown> {
    const kinds = this.handlers.kinds();
    const elicitation = elicitationCapabilityFor(
      (['form', 'url'] as const).filter((mode) => kinds.includes(ELICITATION_HANDLER[mode])),
    );
    const capabilities: Record<string, unknown> = {};
    for (const kind of kinds) {
      if (kind === 'roots') capabilities.roots = { listChanged: false };
      else if (kind === 'sampling') capabilities.sampling = samplingCapabilityFor(this.handlers.samplingTools());
      else capabilities.elicitation = elicitation;
    }
    if (callAnswers) return { ...CALL_ANSWER_CAPABILITIES, ...capabilities };
    const announced = Object.fromEntries(
      Object.entries(CALL_ANSWER_CAPABILITIES).filter(([kind]) => announce?.[kind as keyof typeof announce] === true),
    );
    return { ...announced, ...capabilities };
  }

  /**
   * A transport callback answering the requests of one call: `ping` at once, any other request
   * with the call's own `answer` when the caller gave one, else with the app-wide handlers.
   */
  forCall(
    server: string,
    scopeKey: string,
    answer?: McpCallServerRequestHandler,
    signal?: AbortSignal,
  ): McpServerRequestHandler {
    return async (request: JsonRpcRequest) => {
      if (request.method === McpMethod.Ping) return {};
      const params = request.params ?? {};
      if (answer) return answer({ method: request.method, params }, signal ? { signal } : {});
      if (request.method === McpMethod.ElicitationCreate) return this.elicit(params, server, scopeKey);
      // A handler kind is named after the client capability its requests need.
      const kind = CLIENT_CAPABILITY_OF_REQUEST.get(request.method) as McpClientHandlerKind | undefined;
      const handler = kind ? this.handlers.get(kind) : undefined;
      if (!handler) throw new McpRpcError(JsonRpcErrorCode.MethodNotFound, `Method not found: ${request.method}`);
      if (kind === 'sampling') this.requireSamplingTools(params);
      return ((await handler(params, { server, scopeKey, method: request.method })) ?? {}) as Record<string, unknown>;
    };
  }

  /**
   * The schema says a client must return an error for `tools` or `toolChoice` it did not declare
   * (`sampling.tools`); it names no code, and these are params this client cannot honour: -32602,
   * like an elicitation mode without a handler. The handler never sees the request.
   */
  private requireSamplingTools(params: Record<string, unknown>): void {
    if (this.handlers.samplingTools()) return;
    const fields = samplingToolParams(params);
    if (fields.length) {
      throw new McpRpcError(
        JsonRpcErrorCode.InvalidParams,
        `Invalid params: this client does not support tool use in sampling (capabilities.sampling.tools), but the request carries ${fields.join(' and ')}`,
      );
    }
  }

  private async elicit(
    params: Record<string, unknown>,
    server: string,
    scopeKey: string,
  ): Promise<Record<string, unknown>> {
    const mode: McpElicitationMode = params.mode === 'url' ? 'url' : 'form';
    if (params.mode !== undefined && params.mode !== 'form' && params.mode !== 'url') {
      throw new McpRpcError(
        JsonRpcErrorCode.InvalidParams,
        `Invalid params: unknown elicitation mode ${JSON.stringify(params.mode)}`,
      );
    }
    const handler = this.handlers.get(ELICITATION_HANDLER[mode]);
    if (!handler) {
      if (!this.handlers.kinds().some((kind) => kind === 'elicitation' || kind === 'urlElicitation')) {
        throw new McpRpcError(JsonRpcErrorCode.MethodNotFound, `Method not found: ${McpMethod.ElicitationCreate}`);
      }
      throw new McpRpcError(
        JsonRpcErrorCode.InvalidParams,
        `Invalid params: this client does not support ${mode === 'url' ? 'URL' : 'form'} mode elicitation`,
      );
    }
    const result = ((await handler(params, { server, scopeKey, method: McpMethod.ElicitationCreate })) ?? {}) as Record<
      string,
      unknown
    >;
    return mode === 'form' ? withElicitationDefaults(params, result) : result;
  }
}
