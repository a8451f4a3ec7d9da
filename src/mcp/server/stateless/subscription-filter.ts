import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { JsonRpcErrorCode, type JsonRpcNotification } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { StatelessMetaKey } from '../../protocol/stateless';
import { MCP_COLUMN_LENGTHS } from '../../persistence/mcp-columns.constants';

/** What a `subscriptions/listen` stream carries (the `notifications` param and its acknowledgment). */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  /** Exact resource URIs whose `notifications/resources/updated` the stream carries. */
  resourceSubscriptions?: string[];
  /** Ids of tasks whose `notifications/tasks` the stream carries (the tasks extension). */
  taskIds?: string[];
}

/** What the server can deliver on a listen stream: the list changes it announces, the URIs it serves. */
export interface SubscriptionSupport {
  listChanged: { tools: boolean; prompts: boolean; resources: boolean };
  /** Null when the server does not support resource subscriptions. */
  resourceExists: ((uri: string) => boolean) | null;
}

const LIST_CHANGED = {
  toolsListChanged: McpMethod.ToolsListChanged,
  promptsListChanged: McpMethod.PromptsListChanged,
  resourcesListChanged: McpMethod.ResourcesListChanged,
} as const;

function invalid(message: string): McpRpcError {
  return new McpRpcError(JsonRpcErrorCode.InvalidParams, `Invalid params: ${message}`);
}

/**
 * Reads the `notifications` filter of a `subscriptions/listen` request. Throws `-32602` when it
 * is missing or a field has the wrong type; fields the revision does not define are ignored.
 */
export function readSubscriptionFilter(params: Record<string, unknown> | undefined): SubscriptionFilter {
  const requested = params?.notifications;
  if (!requested || typeof requested !== 'object' || Array.isArray(requested)) throw invalid('subscriptions/listen needs a "notifications" filter object');
  const fields = requested as Record<string, unknown>;
  const filter: SubscriptionFilter = {};
  for (const field of Object.keys(LIST_CHANGED) as (keyof typeof LIST_CHANGED)[]) {
    const value = fields[field];
    if (value !== undefined && typeof value !== 'boolean') throw invalid(`notifications.${field} must be a boolean`);
    if (value) filter[field] = true;
  }
  const uris = fields.resourceSubscriptions;
  if (uris !== undefined) {
    if (!Array.isArray(uris) || !uris.every((uri) => typeof uri === 'string')) throw invalid('notifications.resourceSubscriptions must be an array of URIs');
    const tooLong = uris.find((uri: string) => uri.length > MCP_COLUMN_LENGTHS.subscriptionUri);
    if (tooLong !== undefined) throw invalid(`a URI in notifications.resourceSubscriptions is longer than ${MCP_COLUMN_LENGTHS.subscriptionUri} characters`);
    filter.resourceSubscriptions = [...new Set(uris as string[])];
  }
  const taskIds = fields.taskIds;
  if (taskIds !== undefined) {
    if (!Array.isArray(taskIds) || !taskIds.every((id) => typeof id === 'string')) throw invalid('notifications.taskIds must be an array of task ids');
    filter.taskIds = [...new Set(taskIds as string[])];
  }
  return filter;
}

/**
 * The part of a filter the server agrees to honour, as the acknowledgment states it: list
 * changes the server announces, and the requested URIs of resources it serves (when it supports
 * subscriptions). Everything else is left out; task ids need the task rows, so the endpoint
 * agrees to them itself.
 */
export function agreeSubscriptionFilter(filter: SubscriptionFilter, support: SubscriptionSupport): SubscriptionFilter {
  const agreed: SubscriptionFilter = {};
  if (filter.toolsListChanged && support.listChanged.tools) agreed.toolsListChanged = true;
  if (filter.promptsListChanged && support.listChanged.prompts) agreed.promptsListChanged = true;
  if (filter.resourcesListChanged && support.listChanged.resources) agreed.resourcesListChanged = true;
  const exists = support.resourceExists;
  if (filter.resourceSubscriptions && exists) agreed.resourceSubscriptions = filter.resourceSubscriptions.filter((uri) => exists(uri));
  return agreed;
}

/** True when a stream with the agreed `filter` carries `notification`. */
export function filterWants(filter: SubscriptionFilter, notification: JsonRpcNotification): boolean {
  if (notification.method === McpMethod.Tasks) {
    const id = notification.params?.taskId;
    return typeof id === 'string' && !!filter.taskIds?.includes(id);
  }
  if (notification.method === McpMethod.ResourcesUpdated) {
    const uri = notification.params?.uri;
    return typeof uri === 'string' && !!filter.resourceSubscriptions?.includes(uri);
  }
  const field = (Object.keys(LIST_CHANGED) as (keyof typeof LIST_CHANGED)[]).find((key) => LIST_CHANGED[key] === notification.method);
  return field !== undefined && filter[field] === true;
}

/** The notification as the stream with JSON-RPC id `subscriptionId` sends it: tagged in `_meta`. */
export function tagNotification(notification: JsonRpcNotification, subscriptionId: string | number): JsonRpcNotification {
  const params = notification.params ?? {};
  const meta = params._meta && typeof params._meta === 'object' ? (params._meta as Record<string, unknown>) : {};
  return { ...notification, params: { ...params, _meta: { ...meta, [StatelessMetaKey.SubscriptionId]: subscriptionId } } };
}
