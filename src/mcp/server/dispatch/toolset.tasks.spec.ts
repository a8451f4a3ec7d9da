import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { JsonRpcError, JsonRpcSuccess } from '../../protocol/jsonrpc';
import type { McpTaskSupport } from '../../protocol/tasks';
import { Toolset } from './toolset';
import { discoverResult } from '../stateless/stateless-results';
import type { RegisteredTool } from '../tools/registered-tool';

const context: McpDeliveryContext = {
  principal: { key: 'alice', label: 'Alice', raw: null },
  sessionId: 's-1',
  protocolVersion: '2025-11-25',
};

function tool(name: string, taskSupport?: McpTaskSupport): RegisteredTool {
  return {
    name,
    owner: `Tools#${name}`,
    definition: { name, inputSchema: { type: 'object' } },
    taskSupport,
    validateInput: async (value) => ({ ok: true, value }),
    invoke: async (_args, ctx) => `${name} ran${ctx.task ? ` as task ${ctx.task.id}` : ''}`,
  };
}

const call = (toolset: Toolset, name: string, task?: Record<string, unknown>, ctx: McpDeliveryContext = context) =>
  toolset.deliver(
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {}, ...(task ? { task } : {}) } },
    ctx,
  );

/** How the toolset meets tasks: the capability, the task support of each tool, the hand-over to the task service. */
describe('Toolset and tasks', () => {
  it('runs an inputBeforeTask tool with the call until ctx.startTask(), then hands the task service the answers it used; without the call, it answers inline', async () => {
    const toolset = new Toolset('m', { name: 'n', version: '1' }, 10);
    const ran: string[] = [];
    toolset.register({
      ...tool('book', 'required'),
      inputBeforeTask: true,
      invoke: async (args, ctx) => {
        const answer = await ctx.elicit('Who?', { type: 'object' }, { key: 'user_name' });
        if ((args as { now?: boolean }).now) return `inline ${String(answer.content?.name)}`;
        await ctx.startTask();
        ran.push('after startTask');
        return 'never here';
      },
    });
    const started: unknown[] = [];
    toolset.onTaskCall(
      async (registered, _request, _ctx, answers) => (
        started.push([registered.name, answers]),
        { resultType: 'task', taskId: 't-1' }
      ),
    );
    const answers = { user_name: { action: 'accept', content: { name: 'Ada' } } };
    const client = { request: async () => answers.user_name, consumedAnswers: () => answers };
    const declaring: McpDeliveryContext = {
      ...context,
      sessionId: null,
      protocolVersion: '2026-07-28',
      clientCapabilities: { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } },
      client,
    };
    expect(((await call(toolset, 'book', undefined, declaring)) as JsonRpcSuccess).result).toEqual({
      resultType: 'task',
      taskId: 't-1',
    });
    expect(started).toEqual([['book', answers]]);
    expect(ran).toEqual([]);
    const inline = await toolset.deliver(
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'book', arguments: { now: true } } },
      declaring,
    );
    expect((inline as JsonRpcSuccess).result).toEqual({ content: [{ type: 'text', text: 'inline Ada' }] });
    expect(started).toHaveLength(1);
  });

  it('declares the tasks capability only while a tool allows tasks and a task service listens', () => {
    const toolset = new Toolset('m', { name: 'n', version: '1' }, 10);
    toolset.register(tool('plain'));
    toolset.onTaskCall(async () => ({ task: {} }));
    expect(toolset.getCapabilities()).toEqual({ tools: { listChanged: true } });
    toolset.register(tool('report', 'optional'));
    expect(toolset.getCapabilities()).toEqual({
      tools: { listChanged: true },
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
    toolset.unregister('report');
    expect(toolset.getCapabilities()).toEqual({ tools: { listChanged: true } });
  });

  it('ignores params.task while the capability is not declared', async () => {
    const toolset = new Toolset('m', { name: 'n', version: '1' }, 10);
    toolset.register(tool('plain'));
    toolset.onTaskCall(async () => {
      throw new Error('never called');
    });
    expect(((await call(toolset, 'plain', { ttl: 5 })) as JsonRpcSuccess).result).toEqual({
      content: [{ type: 'text', text: 'plain ran' }],
    });
  });

  it('on 2026-07-28 ignores params.task: a call runs as a task only with the tasks extension declared, and server/discover names the extension', async () => {
    const toolset = new Toolset('m', { name: 'n', version: '1' }, 10);
    toolset.register(tool('maybe', 'optional'));
    toolset.register(tool('always', 'required'));
    toolset.onTaskCall(async (registered) => ({ resultType: 'task', taskId: `t-${registered.name}` }));
    const stateless = { ...context, sessionId: null, protocolVersion: '2026-07-28' };
    expect(((await call(toolset, 'maybe', { ttl: 5 }, stateless)) as JsonRpcSuccess).result).toEqual({
      content: [{ type: 'text', text: 'maybe ran' }],
    });
    expect((await call(toolset, 'always', undefined, stateless)) as JsonRpcError).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32021,
        message: 'Missing required client capability: tool "always" runs only as a task',
        data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
      },
    });
    const declaring = { ...stateless, clientCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } };
    expect(((await call(toolset, 'maybe', undefined, declaring)) as JsonRpcSuccess).result).toEqual({
      resultType: 'task',
      taskId: 't-maybe',
    });
    expect(((await call(toolset, 'always', undefined, declaring)) as JsonRpcSuccess).result).toEqual({
      resultType: 'task',
      taskId: 't-always',
    });
    expect(discoverResult(toolset).capabilities).toEqual({
      tools: { listChanged: true },
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    });
  });

  it('hands a task-augmented call of an optional tool to the task service, and refuses the others with -32601', async () => {
    const toolset = new Toolset('m', { name: 'n', version: '1' }, 10);
    toolset.register(tool('plain'));
    toolset.register(tool('maybe', 'optional'));
    toolset.register(tool('always', 'required'));
    const started: string[] = [];
    toolset.onTaskCall(async (registered, request) => {
      started.push(`${registered.name} ${JSON.stringify(request.params?.task)}`);
      return { task: { taskId: 't-1' } };
    });
    expect(((await call(toolset, 'maybe', { ttl: 5 })) as JsonRpcSuccess).result).toEqual({ task: { taskId: 't-1' } });
    expect(((await call(toolset, 'always', {})) as JsonRpcSuccess).result).toEqual({ task: { taskId: 't-1' } });
    expect(started).toEqual(['maybe {"ttl":5}', 'always {}']);
    expect(((await call(toolset, 'maybe')) as JsonRpcSuccess).result).toEqual({
      content: [{ type: 'text', text: 'maybe ran' }],
    });
    expect((await call(toolset, 'plain', { ttl: 5 })) as JsonRpcError).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32601, message: 'Tool "plain" cannot be called as a task' },
    });
    expect((await call(toolset, 'always')) as JsonRpcError).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32601, message: 'Tool "always" must be called as a task (params.task)' },
    });
    // The worker's own call carries the task in its context: a required tool runs.
    const asTask = { ...context, task: { id: 't-9', update: async () => true } };
    expect(((await call(toolset, 'always', undefined, asTask)) as JsonRpcSuccess).result).toEqual({
      content: [{ type: 'text', text: 'always ran as task t-9' }],
    });
  });
});
