import { Inject, Injectable } from '@nestjs/common';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import { jsonRpcError, type JsonRpcRequest, type JsonRpcResponse } from '../../protocol/jsonrpc';
import { StatelessErrorCode } from '../../protocol/stateless';
import { declaresTasksExtension, tasksExtensionRequired } from '../../protocol/tasks';
import { LIMIT_EXCEEDED_CODE } from '../config/mcp-limits.options';
import type { McpResolvedOptions } from '../config/mcp.options';
import { Toolset } from '../dispatch/toolset';
import { ResourcesFeature } from '../features/resources.feature';
import { McpListenStreams, type ListenSink } from '../stateless/listen-stream-registry';
import type { StatelessEnvelope } from '../stateless/stateless-envelope';
import { httpStatusForError } from '../stateless/stateless-rejection';
import {
  agreeSubscriptionFilter,
  readSubscriptionFilter,
  type SubscriptionFilter,
  type SubscriptionSupport,
} from '../stateless/subscription-filter';
import { McpTaskService } from '../tasks/mcp-tasks.service';

/** A listen request refused: its JSON-RPC error and the HTTP status the revision gives it. */
export interface ListenRefusal {
  response: JsonRpcResponse & { error: { code: number } };
  status: number;
}

/** What the guards of a resource see of a `subscriptions/listen` request when it opens. */
function listenContext(principal: McpPrincipal, envelope: StatelessEnvelope): McpDeliveryContext {
  return {
    principal,
    sessionId: null,
    protocolVersion: envelope.version,
    clientCapabilities: envelope.clientCapabilities,
  };
}

/**
 * What a `subscriptions/listen` request (2026-07-28) is agreed to, whatever transport carries the
 * stream: the filter the server honors (what the mount supports, the resources the caller may
 * see, its own tasks with the tasks extension) within the principal's limit of open streams, and
 * the opening of the stream on the transport's sink.
 */
@Injectable()
export class McpListenAgreement {
  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly toolset: Toolset,
    private readonly resources: ResourcesFeature,
    private readonly tasks: McpTaskService,
    private readonly listenStreams: McpListenStreams,
  ) {}

  /** The filter to open the stream with, or the refusal of the request. */
  async agree(
    request: JsonRpcRequest,
    envelope: StatelessEnvelope,
    principal: McpPrincipal,
  ): Promise<SubscriptionFilter | ListenRefusal> {
    let filter: SubscriptionFilter;
    try {
      const requested = readSubscriptionFilter(request.params, this.options.limits);
      filter = agreeSubscriptionFilter(requested, this.subscriptionSupport());
      // A resource the caller may not see (guards, public, switches) is left out like an unknown one.
      if (filter.resourceSubscriptions)
        filter.resourceSubscriptions = await this.resources.visibleUris(
          filter.resourceSubscriptions,
          listenContext(principal, envelope),
          request.method,
        );
      // Task notifications: only with the tasks extension, and only for the principal's own tasks.
      if (requested.taskIds && this.toolset.hasTaskTools) {
        if (!declaresTasksExtension(envelope.clientCapabilities)) {
          throw new McpRpcError(
            StatelessErrorCode.MissingRequiredClientCapability,
            'Missing required client capability: task notifications need the tasks extension',
            tasksExtensionRequired(),
          );
        }
        filter.taskIds = await this.tasks.ownedTaskIds(requested.taskIds, principal.key);
      }
    } catch (error) {
      if (!(error instanceof McpRpcError)) throw error;
      return {
        response: { jsonrpc: '2.0', id: request.id, error: error.toJsonRpc() },
        status: httpStatusForError(error.code),
      };
    }
    const max = this.options.limits.listenStreamsPerPrincipal;
    if (this.listenStreams.countFor(principal.key) >= max) {
      const response = jsonRpcError(
        request.id,
        LIMIT_EXCEEDED_CODE,
        `Too many open listen streams: this principal already holds ${max} on this server. Close one first`,
        { limit: 'listenStreamsPerPrincipal', max },
      );
      return { response, status: 429 };
    }
    return filter;
  }

  /** Opens the stream of an agreed request on `sink`; each resource update is checked against the switches first. */
  open(request: JsonRpcRequest, filter: SubscriptionFilter, sink: ListenSink, principal: McpPrincipal): void {
    this.listenStreams.open(request.id, filter, sink, principal.key, (uri) =>
      this.resources.switchedOnFor(uri, principal),
    );
  }

  private subscriptionSupport(): SubscriptionSupport {
    const capabilities = this.toolset.getCapabilities() as Record<
      string,
      { listChanged?: unknown; subscribe?: unknown } | undefined
    >;
    return {
      listChanged: {
        tools: capabilities.tools?.listChanged === true,
        prompts: capabilities.prompts?.listChanged === true,
        resources: capabilities.resources?.listChanged === true,
      },
      resourceExists: capabilities.resources?.subscribe === true ? (uri) => this.resources.exists(uri) : null,
    };
  }
}

/** True when `agree` refused the request. */
export function isListenRefusal(value: SubscriptionFilter | ListenRefusal): value is ListenRefusal {
  return 'response' in value && 'status' in value;
}
