import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { JsonRpcErrorCode, type JsonRpcNotification } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { StatelessMetaKey } from '../../protocol/stateless';
import { MCP_COLUMN_LENGTHS } from '../../persistence/mcp-columns.constants';
import type { McpResolvedLimits } from '../config/mcp-limits.options';

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

function invalid(message: string, data?: Record<string, unknown>): McpRpcError {
  return new McpRpcError(JsonRpcErrorCode.InvalidParams, `Invalid params: ${message}`, data);
}

/** The caps of `limits` a filter is read under: how many entries each list may hold. */
export type SubscriptionFilterCaps = Pick<McpResolvedLimits, 'listenResourceSubscriptions' | 'listenTaskIds'>;

/** No cap: every list may be as long as the body allows. */
const UNCAPPED: SubscriptionFilterCaps = { listenResourceSubscriptions: Infinity, listenTaskIds: Infinity };

/**
 * Refuses a list longer than its cap before a single entry is read, so a huge filter costs the
 * server nothing but the parse of the body (and never a database query).
 */
function checkCount(
  field: 'resourceSubscriptions' | 'taskIds',
  list: unknown[],
  limit: keyof SubscriptionFilterCaps,
  max: number,
): void {
  if (list.length > max)
    throw invalid(`notifications.${field} names ${list.length} entries; this server accepts at most ${max}`, {
      limit,
      max,
    });
}

/**
 * Reads the `notifications` filter of a `subscriptions/listen` request. Throws `-32602` when it
 * is missing, a field has the wrong type, or a list is longer than its cap in `caps` (with
 * `data: { limit, max }`, like the other caps); fields the revision does not define are ignored.
 */
export function readSubscriptionFilter(
  params: Record<string, unknown> | undefined,
  caps: SubscriptionFilterCaps = UNCAPPED,
): SubscriptionFilter {
  const requested = params?.notifications;
  if (!requested || typeof requested !== 'object' || Array.isArray(requested))
    throw invalid('subscriptions/listen needs a "notifications" filter object');
  const fields = requested as Record<string, unknown>;
  const filter: SubscriptionFilter = {};
  for (const field of Object.keys(LIST_CHANGED) as (keyof typeof LIST_CHANGED)[]) {
    const value = fields[field];
    if (value !== undefined && typeof value !== 'boolean') throw invalid(`notifications.${field} must be a boolean`);
    if (value) filter[field] = true;
  }
  const uris = fields.resourceSubscriptions;
  if (uris !== undefined) {
    if (!Array.isArray(uris)) throw invalid('notifications.resourceSubscriptions must be an array of URIs');
    checkCount('resourceSubscriptions', uris, 'listenResourceSubscriptions', caps.listenResourceSubscriptions);
    if (!uris.every((uri) => typeof uri === 'string'))
      throw invalid('notifications.resourceSubscriptions must be an array of URIs');
    const tooLong = uris.find((uri: string) => uri.length > MCP_COLUMN_LENGTHS.subscriptionUri);
    if (tooLong !== undefined)
      throw invalid(
        `a URI in notifications.resourceSubscriptions is longer than ${MCP_COLUMN_LENGTHS.subscriptionUri} characters`,
      );
    filter.resourceSubscriptions = [...new Set(uris)];
  }
  const taskIds = fields.taskIds;
  if (taskIds !== undefined) {
    if (!Array.isArray(taskIds)) throw invalid('notifications.taskIds must be an array of task ids');
    checkCount('taskIds', taskIds, 'listenTaskIds', caps.listenTaskIds);
    if (!taskIds.every((id) => typeof id === 'string'))
      throw invalid('notifications.taskIds must be an array of task ids');
    filter.taskIds = [...new Set(taskIds)];
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
  if (filter.resourceSubscriptions && exists)
    agreed.resourceSubscriptions = filter.resourceSubscriptions.filter((uri) => exists(uri));
  return agreed;
}

/**
 * An agreed filter in the form delivery reads: sets, so that matching a notification costs the
 * same whether the stream watches one URI or the most the caps allow.
 */
export interface SubscriptionSelection {
  /** The list-changed notification methods the stream carries. */
  listChanged: ReadonlySet<string>;
  /** The resource URIs whose updates it carries. */
  uris: ReadonlySet<string>;
  /** The task ids whose status changes it carries. */
  taskIds: ReadonlySet<string>;
}

/** Compiles an agreed filter for delivery (once, when its stream opens). */
export function selectionOf(filter: SubscriptionFilter): SubscriptionSelection {
  const fields = Object.keys(LIST_CHANGED) as (keyof typeof LIST_CHANGED)[];
  return {
    listChanged: new Set(fields.filter((field) => filter[field] === true).map((field) => LIST_CHANGED[field])),
    uris: new Set(filter.resourceSubscriptions ?? []),
    taskIds: new Set(filter.taskIds ?? []),
  };
}

/** True when a stream with the agreed `selection` carries `notification`. */
export function filterWants(selection: SubscriptionSelection, notification: JsonRpcNotification): boolean {
  if (notification.method === McpMethod.Tasks) {
    const id = notification.params?.taskId;
    return typeof id === 'string' && selection.taskIds.has(id);
  }
  if (notification.method === McpMethod.ResourcesUpdated) {
    const uri = notification.params?.uri;
    return typeof uri === 'string' && selection.uris.has(uri);
  }
  return selection.listChanged.has(notification.method);
}

/** The notification as the stream with JSON-RPC id `subscriptionId` sends it: tagged in `_meta`. */
export function tagNotification(
  notification: JsonRpcNotification,
  subscriptionId: string | number,
): JsonRpcNotification {
  const params = notification.params ?? {};
  const meta = params._meta && typeof params._meta === 'object' ? (params._meta as Record<string, unknown>) : {};
  return {
    ...notification,
    params: { ...params, _meta: { ...meta, [StatelessMetaKey.SubscriptionId]: subscriptionId } },
  };
}
