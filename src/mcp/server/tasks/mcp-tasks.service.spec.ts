import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import { getMcpToolsetToken } from '../../mcp.constants';
import { McpModule } from '../../mcp.module';
import type { JsonRpcError, JsonRpcResponse, JsonRpcSuccess } from '../../protocol/jsonrpc';
import { createInMemoryMcpStores } from '../../testing/in-memory-stores';
import { McpTool } from '../decorators/mcp-tool.decorator';
import type { Toolset } from '../dispatch/toolset';
import { McpTaskService } from './mcp-tasks.service';

/** Lets a test decide when a `hold` task ends. */
class Gate {
  private opened!: () => void;
  promise = new Promise<void>((resolve) => (this.opened = resolve));
  open(): void {
    this.opened();
  }
}

let gate = new Gate();

@Injectable()
class TaskTools {
  @McpTool({
    description: 'Reports',
    task: 'optional',
    input: { type: 'object', properties: { n: { type: 'number' } } },
  })
  report(args: { n?: number }) {
    return `report ${args.n ?? 0}`;
  }

  @McpTool({ description: 'Fails as a tool', task: 'optional', input: { type: 'object', properties: {} } })
  broken() {
    throw new Error('kaput');
  }

  @McpTool({ description: 'Waits for the gate', task: 'optional', input: { type: 'object', properties: {} } })
  async hold() {
    await gate.promise;
    return 'released';
  }
}

const alice = { key: 'alice', label: 'Alice', raw: null };
const bob = { key: 'bob', label: 'Bob', raw: null };
const legacy: McpDeliveryContext = { principal: alice, sessionId: null, protocolVersion: '2025-11-25' };
const EXTENSION = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const stateless: McpDeliveryContext = {
  principal: alice,
  sessionId: null,
  protocolVersion: '2026-07-28',
  clientCapabilities: EXTENSION,
};
const NOT_FOUND = { code: -32602, message: 'Failed to retrieve task: Task not found' };

async function boot(tasks: Record<string, unknown>, pageSize = 50) {
  const stores = createInMemoryMcpStores();
  const moduleRef = await Test.createTestingModule({
    imports: [McpModule.forRoot({ auth: () => null, stores, tasks, advanced: { pageSize } })],
    providers: [TaskTools],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return { app, stores, toolset: app.get<Toolset>(getMcpToolsetToken()), service: app.get(McpTaskService) };
}

/** The task methods of a mount, through the toolset as the transports call them, on the in-memory stores. */
describe('McpTaskService', () => {
  let app: INestApplication;
  let toolset: Toolset;
  let stores: ReturnType<typeof createInMemoryMcpStores>;
  let service: McpTaskService;
  let id = 0;

  const send = (
    method: string,
    params: Record<string, unknown> | undefined,
    context: McpDeliveryContext = legacy,
  ): Promise<JsonRpcResponse | null> =>
    toolset.deliver({ jsonrpc: '2.0', id: ++id, method, ...(params ? { params } : {}) }, context);
  const ok = async (method: string, params: Record<string, unknown> | undefined, context?: McpDeliveryContext) => {
    const response = (await send(method, params, context)) as JsonRpcSuccess & JsonRpcError;
    expect(response.error).toBeUndefined();
    return response.result as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- wire JSON read only by the assertions
  };
  const fails = async (method: string, params: Record<string, unknown> | undefined, context?: McpDeliveryContext) =>
    ((await send(method, params, context)) as JsonRpcError).error;
  const start = async (
    name: string,
    task: Record<string, unknown> = {},
    context: McpDeliveryContext = legacy,
    args: Record<string, unknown> = {},
  ) => {
    const result = await ok('tools/call', { name, arguments: args, task }, context);
    return (result.task ?? result) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- wire JSON read only by the assertions
  };

  beforeAll(async () => {
    ({ app, toolset, stores, service } = await boot({ maxTtlMs: 5000, defaultTtlMs: 2000, pollIntervalMs: 250 }, 2));
  });

  afterAll(async () => {
    gate.open();
    await app?.close();
  });

  afterEach(() => jest.useRealTimers());

  it('keeps the ttl a client asks for, cut to maxTtlMs and floored, and falls back to defaultTtlMs for missing or bad values', async () => {
    expect((await start('report', { ttl: 1500 })).ttl).toBe(1500);
    expect((await start('report', { ttl: 1500.9 })).ttl).toBe(1500);
    expect((await start('report', { ttl: 10_000_000 })).ttl).toBe(5000);
    expect((await start('report', { ttl: -4 })).ttl).toBe(2000);
    expect((await start('report', { ttl: 'long' })).ttl).toBe(2000);
    expect((await start('report', { ttl: Number.POSITIVE_INFINITY })).ttl).toBe(2000);
    const created = await start('report');
    expect(created).toEqual({
      taskId: expect.any(String),
      status: 'working',
      createdAt: expect.any(String),
      lastUpdatedAt: expect.any(String),
      ttl: 2000,
      pollInterval: 250,
    });
  });

  it('answers -32602 when taskId is not a string, on tasks/get, tasks/result and tasks/cancel', async () => {
    const invalid = { code: -32602, message: 'Invalid params: "taskId" must be a string' };
    expect(await fails('tasks/get', { taskId: 7 })).toEqual(invalid);
    expect(await fails('tasks/result', {})).toEqual(invalid);
    expect(await fails('tasks/cancel', undefined)).toEqual(invalid);
    expect(await fails('tasks/update', { taskId: null, inputResponses: {} }, stateless)).toEqual(invalid);
  });

  it("answers an unknown id and another principal's task alike, -32602 not found", async () => {
    const task = await start('report');
    const asBob = { ...legacy, principal: bob };
    expect(await fails('tasks/get', { taskId: 'nope' })).toEqual(NOT_FOUND);
    expect(await fails('tasks/get', { taskId: task.taskId }, asBob)).toEqual(NOT_FOUND);
    expect(await fails('tasks/result', { taskId: task.taskId }, asBob)).toEqual(NOT_FOUND);
    expect(await fails('tasks/cancel', { taskId: task.taskId }, asBob)).toEqual(NOT_FOUND);
    expect((await ok('tasks/list', undefined, asBob)).tasks).toEqual([]);
  });

  it('serves a task as unknown once its ttl is over, and leaves it out of ownedTaskIds', async () => {
    jest.useFakeTimers({
      doNotFake: [
        'nextTick',
        'setImmediate',
        'queueMicrotask',
        'setTimeout',
        'clearTimeout',
        'setInterval',
        'clearInterval',
      ],
      now: Date.UTC(2026, 0, 1),
    });
    const task = await start('report', { ttl: 1000 });
    await ok('tasks/result', { taskId: task.taskId });
    expect((await ok('tasks/get', { taskId: task.taskId })).status).toBe('completed');
    expect(await service.ownedTaskIds([task.taskId, 'nope'], 'alice')).toEqual([task.taskId]);
    expect(await service.ownedTaskIds([task.taskId], 'bob')).toEqual([]);
    jest.setSystemTime(Date.UTC(2026, 0, 1) + 1000);
    expect(await fails('tasks/get', { taskId: task.taskId })).toEqual(NOT_FOUND);
    expect(await fails('tasks/result', { taskId: task.taskId })).toEqual(NOT_FOUND);
    expect(await service.ownedTaskIds([task.taskId], 'alice')).toEqual([]);
  });

  it('answers tasks/result with the tool result and the related-task _meta', async () => {
    const task = await start('report', {}, legacy, { n: 3 });
    expect(await ok('tasks/result', { taskId: task.taskId })).toEqual({
      content: [{ type: 'text', text: 'report 3' }],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } },
    });
  });

  it('ends a tool error as failed on 2025-11-25 (tasks/result still answers the result) and as completed on 2026-07-28', async () => {
    const failed = await start('broken');
    const result = await ok('tasks/result', { taskId: failed.taskId });
    expect(result.isError).toBe(true);
    expect(result._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId: failed.taskId } });
    const row = await stores.tasks.get(failed.taskId as string);
    expect([row?.status, row?.statusMessage]).toEqual(['failed', result.content[0].text]);
    // tasks/get of 2026-07-28 on that failed row: the error built from its status message.
    expect((await ok('tasks/get', { taskId: failed.taskId }, stateless)).error).toEqual({
      code: -32603,
      message: result.content[0].text,
    });

    const created = await start('broken', {}, stateless);
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 2000, pollIntervalMs: 250 });
    await ok('tasks/result', { taskId: created.taskId }, stateless);
    const detailed = await ok('tasks/get', { taskId: created.taskId }, stateless);
    expect([detailed.status, detailed.result.isError]).toEqual(['completed', true]);
  });

  it('cancels a working task (tasks/result then answers the cancellation) and refuses to cancel a finished one on 2025-11-25', async () => {
    gate = new Gate();
    const task = await start('hold');
    const cancelled = await ok('tasks/cancel', { taskId: task.taskId });
    expect(cancelled).toMatchObject({
      taskId: task.taskId,
      status: 'cancelled',
      statusMessage: 'The task was cancelled by request',
    });
    expect(await fails('tasks/result', { taskId: task.taskId })).toEqual({
      code: -32603,
      message: `Task ${task.taskId} was cancelled`,
    });
    expect(await fails('tasks/cancel', { taskId: task.taskId })).toEqual({
      code: -32602,
      message: "Cannot cancel task: already in terminal status 'cancelled'",
    });
    gate.open();
    const done = await start('report');
    await ok('tasks/result', { taskId: done.taskId });
    expect(await fails('tasks/cancel', { taskId: done.taskId })).toEqual({
      code: -32602,
      message: "Cannot cancel task: already in terminal status 'completed'",
    });
  });

  it('acknowledges tasks/cancel with {} on 2026-07-28, for a working task and a finished one', async () => {
    gate = new Gate();
    const task = await start('hold', {}, stateless);
    expect(await ok('tasks/cancel', { taskId: task.taskId }, stateless)).toEqual({});
    expect((await ok('tasks/get', { taskId: task.taskId }, stateless)).status).toBe('cancelled');
    expect(await ok('tasks/cancel', { taskId: task.taskId }, stateless)).toEqual({});
    expect((await stores.tasks.get(task.taskId as string))?.status).toBe('cancelled');
    gate.open();
  });

  it('pages tasks/list with nextCursor and refuses an unknown or exhausted cursor', async () => {
    const carol = { ...legacy, principal: { key: 'carol', label: 'Carol', raw: null } };
    const ids = [
      (await start('report', {}, carol)).taskId,
      (await start('report', {}, carol)).taskId,
      (await start('report', {}, carol)).taskId,
    ];
    const first = await ok('tasks/list', {}, carol);
    expect(first.tasks).toHaveLength(2);
    expect(typeof first.nextCursor).toBe('string');
    const second = await ok('tasks/list', { cursor: first.nextCursor }, carol);
    expect(second.nextCursor).toBeUndefined();
    expect([...first.tasks, ...second.tasks].map((task: { taskId: string }) => task.taskId).sort()).toEqual(
      [...ids].sort(),
    );
    expect(await fails('tasks/list', { cursor: 'not-a-cursor' }, carol)).toEqual({
      code: -32602,
      message: 'Invalid params: unknown cursor',
    });
    // A well-formed cursor past the last page: dave has no tasks, so page 1 is empty.
    const dave = { ...legacy, principal: { key: 'dave', label: 'Dave', raw: null } };
    expect(await fails('tasks/list', { cursor: first.nextCursor }, dave)).toEqual({
      code: -32602,
      message: 'Invalid params: unknown cursor',
    });
    expect(await ok('tasks/list', undefined, dave)).toEqual({ tasks: [] });
  });

  it('on 2026-07-28 refuses the task methods without the tasks extension (-32021), and tasks/update checks inputResponses', async () => {
    const task = await start('report', {}, stateless);
    const bare = { ...stateless, clientCapabilities: null };
    expect(await fails('tasks/get', { taskId: task.taskId }, bare)).toEqual({
      code: -32021,
      message: 'Missing required client capability: tasks/get needs the tasks extension',
      data: { requiredCapabilities: EXTENSION },
    });
    expect(await fails('tasks/update', { taskId: task.taskId, inputResponses: [] }, stateless)).toEqual({
      code: -32602,
      message: 'Invalid params: "inputResponses" must be an object',
    });
    expect(await fails('tasks/update', { taskId: task.taskId, inputResponses: 'yes' }, stateless)).toEqual({
      code: -32602,
      message: 'Invalid params: "inputResponses" must be an object',
    });
    expect(await fails('tasks/update', { taskId: task.taskId }, stateless)).toEqual({
      code: -32602,
      message: 'Invalid params: "inputResponses" must be an object',
    });
    // Answers under keys the task does not wait on are ignored.
    expect(
      await ok(
        'tasks/update',
        { taskId: task.taskId, inputResponses: { 'elicitation-1': { action: 'cancel' } } },
        stateless,
      ),
    ).toEqual({});
    expect(await fails('tasks/update', { taskId: task.taskId, inputResponses: {} })).toEqual({
      code: -32601,
      message: 'Method not found: tasks/update',
    });
  });

  it('answers -32001 from tasks/result when the task is still running at resultTimeoutMs', async () => {
    const short = await boot({ resultTimeoutMs: 1 });
    const main = toolset;
    try {
      gate = new Gate();
      toolset = short.toolset;
      const task = await start('hold');
      expect(await fails('tasks/result', { taskId: task.taskId })).toEqual({
        code: -32001,
        message: `Task ${task.taskId} is still working after 1 ms: call tasks/result again`,
      });
      gate.open();
    } finally {
      toolset = main;
      await short.app.close();
    }
  });
});
