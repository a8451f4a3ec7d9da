import { Injectable } from '@nestjs/common';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { JsonRpcErrorCode, type JsonRpcRequest } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { CLIENT_CAPABILITY_OF_REQUEST } from '../../protocol/method-catalog';
import type { McpClientHandlerKind } from '../interfaces/mcp-client-handlers.interface';
import type { McpServerRequestHandler } from '../transports/mcp-transport.interface';
import { McpClientHandlerExplorer } from './client-handler.explorer';
import { withElicitationDefaults } from './elicitation-defaults';

/**
 * Answers the requests a server sends during a call (`ping`, `roots/list`,
 * `sampling/createMessage`, `elicitation/create`) with the registered handlers; a method without
 * a handler gets -32601. An accepted elicitation gets the schema's defaults for the fields the
 * handler left out (SEP-1034), whichever transport carried the request.
 */
@Injectable()
export class McpServerRequestDispatcher {
  constructor(private readonly handlers: McpClientHandlerExplorer) {}

  /** Client capabilities to announce: one entry per kind that has a handler. */
  capabilities(): Record<string, unknown> {
    return Object.fromEntries(this.handlers.kinds().map((kind) => [kind, kind === 'roots' ? { listChanged: false } : {}]));
  }

  /** A transport callback answering the requests of one call. */
  forCall(server: string, scopeKey: string): McpServerRequestHandler {
    return async (request: JsonRpcRequest) => {
      if (request.method === McpMethod.Ping) return {};
      // A handler kind is named after the client capability its requests need.
      const kind = CLIENT_CAPABILITY_OF_REQUEST.get(request.method) as McpClientHandlerKind | undefined;
      const handler = kind ? this.handlers.get(kind) : undefined;
      if (!handler) throw new McpRpcError(JsonRpcErrorCode.MethodNotFound, `Method not found: ${request.method}`);
      const params = request.params ?? {};
      const result = ((await handler(params, { server, scopeKey, method: request.method })) ?? {}) as Record<string, unknown>;
      return kind === 'elicitation' ? withElicitationDefaults(params, result) : result;
    };
  }
}
