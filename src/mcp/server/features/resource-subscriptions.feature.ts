import { Inject, Injectable } from '@nestjs/common';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import { LIMIT_EXCEEDED_CODE } from '../config/mcp-limits.options';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import { JsonRpcErrorCode, type JsonRpcRequest } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { existsInRevision } from '../../protocol/method-catalog';
import { Toolset } from '../dispatch/toolset';
import { invalidParams, requireStringParam } from './feature-handler';
import type { McpSubscriptionStore } from '../../persistence/interfaces/mcp-subscription-store.interface';
import { MCP_COLUMN_LENGTHS } from '../../persistence/mcp-columns.constants';
import { InjectMcpSubscriptionStore } from '../../persistence/mcp-persistence.constants';
import { ResourcesFeature, resourceNotFound } from './resources.feature';

/**
 * `resources/subscribe` and `resources/unsubscribe` on session revisions, recorded in the
 * database so `McpResourceNotifier` reaches the subscriber from any replica. 2026-07-28 replaced
 * them with `subscriptions/listen`: there they are unknown methods.
 */
@Injectable()
export class ResourceSubscriptionsFeature {
  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly toolset: Toolset,
    private readonly resources: ResourcesFeature,
    @InjectMcpSubscriptionStore() private readonly store: McpSubscriptionStore,
  ) {}

  /** Starts serving both methods. */
  install(): void {
    this.toolset.handle(McpMethod.ResourcesSubscribe, async (request, context) => {
      const { sessionId, uri } = this.target(request, context);
      if (!(await this.resources.existsFor(uri, context, McpMethod.ResourcesSubscribe)))
        throw resourceNotFound(uri, context.protocolVersion);
      const max = this.options.limits.subscriptionsPerSession;
      if ((await this.store.countForSession(sessionId, uri)) >= max) {
        throw new McpRpcError(
          LIMIT_EXCEEDED_CODE,
          `Too many resource subscriptions: this session already watches ${max} URIs. Unsubscribe from one first`,
          {
            limit: 'subscriptionsPerSession',
            max,
          },
        );
      }
      await this.store.subscribe(sessionId, uri);
      return {};
    });
    this.toolset.handle(McpMethod.ResourcesUnsubscribe, async (request, context) => {
      const { sessionId, uri } = this.target(request, context);
      await this.store.unsubscribe(sessionId, uri);
      return {};
    });
  }

  private target(request: JsonRpcRequest, context: McpDeliveryContext): { sessionId: string; uri: string } {
    if (!existsInRevision(request.method, context.protocolVersion)) {
      throw new McpRpcError(
        JsonRpcErrorCode.MethodNotFound,
        `Method not found: ${request.method} (${context.protocolVersion} uses ${McpMethod.SubscriptionsListen})`,
      );
    }
    const uri = requireStringParam(request, 'uri');
    if (uri.length > MCP_COLUMN_LENGTHS.subscriptionUri)
      throw invalidParams(`Invalid params: "uri" is longer than ${MCP_COLUMN_LENGTHS.subscriptionUri} characters`);
    if (!context.sessionId) {
      throw new McpRpcError(
        JsonRpcErrorCode.InvalidRequest,
        `${request.method} needs an MCP session: notifications reach a session's stream`,
      );
    }
    return { sessionId: context.sessionId, uri };
  }
}
