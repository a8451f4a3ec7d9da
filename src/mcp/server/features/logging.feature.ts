import { Injectable } from '@nestjs/common';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import { JsonRpcErrorCode, type JsonRpcRequest } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { existsInRevision } from '../../protocol/method-catalog';
import { isLogLevel } from '../pipeline/handler-context.factory';
import { McpCachedSessionStore } from '../sessions/mcp-cached-session.store';
import { Toolset } from '../dispatch/toolset';
import { invalidParams } from './feature-handler';

/**
 * Server logging: announces the `logging` capability and serves `logging/setLevel` on session
 * revisions by storing the level on the session row (the session cache drops its copies on every
 * replica), so `ctx.log` honours it on every replica.
 * On 2026-07-28 the level travels in each request's `_meta` and the method does not exist.
 */
@Injectable()
export class LoggingFeature {
  constructor(
    private readonly toolset: Toolset,
    private readonly sessions: McpCachedSessionStore,
  ) {}

  /** Starts serving `logging/setLevel` and announces the `logging` capability. */
  install(): void {
    this.toolset.declareCapability('logging', {});
    this.toolset.handle(McpMethod.LoggingSetLevel, (request, context) => this.setLevel(request, context));
  }

  private async setLevel(request: JsonRpcRequest, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    if (!existsInRevision(request.method, context.protocolVersion)) {
      throw new McpRpcError(
        JsonRpcErrorCode.MethodNotFound,
        `Method not found: ${request.method} (${context.protocolVersion} carries the level in _meta)`,
      );
    }
    const level = request.params?.level;
    if (!isLogLevel(level)) {
      throw invalidParams(
        `Invalid params: "level" must be one of debug, info, notice, warning, error, critical, alert, emergency`,
      );
    }
    if (!context.sessionId) {
      throw new McpRpcError(
        JsonRpcErrorCode.InvalidRequest,
        `${request.method} needs an MCP session: the level is stored on it`,
      );
    }
    await this.sessions.setLogLevel(context.sessionId, context.principal, level);
    return {};
  }
}
