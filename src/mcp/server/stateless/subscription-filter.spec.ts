import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { MCP_COLUMN_LENGTHS } from '../../persistence/mcp-columns.constants';
import { JsonRpcErrorCode } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { StatelessMetaKey } from '../../protocol/stateless';
import {
  agreeSubscriptionFilter,
  filterWants,
  readSubscriptionFilter,
  selectionOf,
  tagNotification,
  type SubscriptionSupport,
} from './subscription-filter';

const invalidParams = (params: Record<string, unknown> | undefined): McpRpcError => {
  try {
    readSubscriptionFilter(params);
  } catch (error) {
    if (error instanceof McpRpcError) return error;
    throw error;
  }
  throw new Error('expected readSubscriptionFilter to throw');
};

describe('subscriptions/listen filter', () => {
  it('refuses a missing, null, scalar or array "notifications" param with -32602', () => {
    for (const params of [
      undefined,
      {},
      { notifications: null },
      { notifications: 'all' },
      { notifications: [true] },
    ]) {
      const error = invalidParams(params);
      expect(error.code).toBe(JsonRpcErrorCode.InvalidParams);
      expect(error.message).toBe('Invalid params: subscriptions/listen needs a "notifications" filter object');
    }
  });

  it('refuses a list-changed field that is not a boolean, naming the field', () => {
    expect(invalidParams({ notifications: { promptsListChanged: 'yes' } }).message).toBe(
      'Invalid params: notifications.promptsListChanged must be a boolean',
    );
    expect(invalidParams({ notifications: { toolsListChanged: 1 } }).message).toBe(
      'Invalid params: notifications.toolsListChanged must be a boolean',
    );
  });

  it('keeps only the list changes asked for as true, and ignores fields the revision does not define', () => {
    expect(
      readSubscriptionFilter({
        notifications: {
          toolsListChanged: true,
          promptsListChanged: false,
          resourcesListChanged: true,
          somethingElse: 'x',
        },
      }),
    ).toEqual({
      toolsListChanged: true,
      resourcesListChanged: true,
    });
    expect(readSubscriptionFilter({ notifications: {} })).toEqual({});
  });

  it('refuses resourceSubscriptions that is not an array of strings, or holds a URI longer than its column', () => {
    expect(invalidParams({ notifications: { resourceSubscriptions: 'file:///a' } }).message).toBe(
      'Invalid params: notifications.resourceSubscriptions must be an array of URIs',
    );
    expect(invalidParams({ notifications: { resourceSubscriptions: ['file:///a', 7] } }).message).toBe(
      'Invalid params: notifications.resourceSubscriptions must be an array of URIs',
    );
    const long = `file:///${'x'.repeat(MCP_COLUMN_LENGTHS.subscriptionUri)}`;
    expect(invalidParams({ notifications: { resourceSubscriptions: [long] } }).message).toBe(
      `Invalid params: a URI in notifications.resourceSubscriptions is longer than ${MCP_COLUMN_LENGTHS.subscriptionUri} characters`,
    );
  });

  it('keeps each requested URI once, in the order first asked, and accepts one exactly as long as the column', () => {
    const edge = 'u'.repeat(MCP_COLUMN_LENGTHS.subscriptionUri);
    expect(
      readSubscriptionFilter({
        notifications: { resourceSubscriptions: ['file:///b', 'file:///a', 'file:///b', edge] },
      }),
    ).toEqual({
      resourceSubscriptions: ['file:///b', 'file:///a', edge],
    });
    expect(readSubscriptionFilter({ notifications: { resourceSubscriptions: [] } })).toEqual({
      resourceSubscriptions: [],
    });
  });

  it('agrees only to the list changes the server announces and the URIs it serves', () => {
    const support: SubscriptionSupport = {
      listChanged: { tools: true, prompts: false, resources: true },
      resourceExists: (uri) => uri.startsWith('file:///known'),
    };
    expect(
      agreeSubscriptionFilter(
        {
          toolsListChanged: true,
          promptsListChanged: true,
          resourcesListChanged: true,
          resourceSubscriptions: ['file:///known/1', 'file:///gone'],
        },
        support,
      ),
    ).toEqual({ toolsListChanged: true, resourcesListChanged: true, resourceSubscriptions: ['file:///known/1'] });
    expect(
      agreeSubscriptionFilter(
        { resourcesListChanged: true },
        { listChanged: { tools: true, prompts: true, resources: false }, resourceExists: null },
      ),
    ).toEqual({});
    expect(
      agreeSubscriptionFilter(
        { promptsListChanged: true },
        { listChanged: { tools: false, prompts: true, resources: false }, resourceExists: null },
      ),
    ).toEqual({ promptsListChanged: true });
  });

  it('drops resource subscriptions entirely when the server does not support them', () => {
    expect(
      agreeSubscriptionFilter(
        { resourceSubscriptions: ['file:///a'] },
        { listChanged: { tools: false, prompts: false, resources: false }, resourceExists: null },
      ),
    ).toEqual({});
  });

  it('carries a resource update only for a subscribed URI, and a list change only when agreed', () => {
    const filter = selectionOf({ toolsListChanged: true, resourceSubscriptions: ['file:///a'] });
    expect(
      filterWants(filter, { jsonrpc: '2.0', method: McpMethod.ResourcesUpdated, params: { uri: 'file:///a' } }),
    ).toBe(true);
    expect(
      filterWants(filter, { jsonrpc: '2.0', method: McpMethod.ResourcesUpdated, params: { uri: 'file:///b' } }),
    ).toBe(false);
    expect(filterWants(filter, { jsonrpc: '2.0', method: McpMethod.ResourcesUpdated, params: { uri: 42 } })).toBe(
      false,
    );
    expect(filterWants(filter, { jsonrpc: '2.0', method: McpMethod.ResourcesUpdated })).toBe(false);
    expect(
      filterWants(selectionOf({ toolsListChanged: true }), {
        jsonrpc: '2.0',
        method: McpMethod.ResourcesUpdated,
        params: { uri: 'file:///a' },
      }),
    ).toBe(false);
    expect(filterWants(filter, { jsonrpc: '2.0', method: McpMethod.ToolsListChanged })).toBe(true);
    expect(filterWants(filter, { jsonrpc: '2.0', method: McpMethod.PromptsListChanged })).toBe(false);
    expect(
      filterWants(filter, { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } }),
    ).toBe(false);
  });

  it('carries a task status change only for an agreed task id', () => {
    const tasks = selectionOf({ taskIds: ['t-1', 't-2'] });
    expect(
      filterWants(tasks, { jsonrpc: '2.0', method: McpMethod.Tasks, params: { taskId: 't-2', status: 'working' } }),
    ).toBe(true);
    expect(
      filterWants(tasks, { jsonrpc: '2.0', method: McpMethod.Tasks, params: { taskId: 't-3', status: 'working' } }),
    ).toBe(false);
    expect(filterWants(tasks, { jsonrpc: '2.0', method: McpMethod.Tasks, params: { taskId: 2 } })).toBe(false);
  });

  it('refuses a list longer than its cap with -32602 naming the limit, before looking at its entries', () => {
    const caps = { listenResourceSubscriptions: 2, listenTaskIds: 3 };
    const read = (notifications: Record<string, unknown>) => {
      try {
        readSubscriptionFilter({ notifications }, caps);
      } catch (error) {
        if (error instanceof McpRpcError) return error;
        throw error;
      }
      throw new Error('expected readSubscriptionFilter to throw');
    };
    const uris = read({ resourceSubscriptions: ['a://1', 'a://1', 'a://2'] });
    expect({ code: uris.code, message: uris.message, data: uris.data }).toEqual({
      code: JsonRpcErrorCode.InvalidParams,
      message: 'Invalid params: notifications.resourceSubscriptions names 3 entries; this server accepts at most 2',
      data: { limit: 'listenResourceSubscriptions', max: 2 },
    });
    // Entries that are not even strings: the count is refused first, without reading them.
    const tasks = read({ taskIds: [1, 2, 3, 4] });
    expect({ code: tasks.code, message: tasks.message, data: tasks.data }).toEqual({
      code: JsonRpcErrorCode.InvalidParams,
      message: 'Invalid params: notifications.taskIds names 4 entries; this server accepts at most 3',
      data: { limit: 'listenTaskIds', max: 3 },
    });
    expect(
      readSubscriptionFilter(
        { notifications: { resourceSubscriptions: ['a://1', 'a://2'], taskIds: ['t-1', 't-2', 't-3'] } },
        caps,
      ),
    ).toEqual({
      resourceSubscriptions: ['a://1', 'a://2'],
      taskIds: ['t-1', 't-2', 't-3'],
    });
  });

  it('tags a notification with the listen request id, keeping its params and other _meta keys', () => {
    expect(tagNotification({ jsonrpc: '2.0', method: McpMethod.ToolsListChanged }, 7)).toEqual({
      jsonrpc: '2.0',
      method: McpMethod.ToolsListChanged,
      params: { _meta: { [StatelessMetaKey.SubscriptionId]: 7 } },
    });
    expect(
      tagNotification(
        { jsonrpc: '2.0', method: McpMethod.ResourcesUpdated, params: { uri: 'file:///a', _meta: { trace: 't1' } } },
        'listen-1',
      ),
    ).toEqual({
      jsonrpc: '2.0',
      method: McpMethod.ResourcesUpdated,
      params: { uri: 'file:///a', _meta: { trace: 't1', [StatelessMetaKey.SubscriptionId]: 'listen-1' } },
    });
    expect(
      tagNotification({ jsonrpc: '2.0', method: McpMethod.ToolsListChanged, params: { _meta: 'not an object' } }, 1)
        .params,
    ).toEqual({
      _meta: { [StatelessMetaKey.SubscriptionId]: 1 },
    });
  });
});
