import 'reflect-metadata';
import { Injectable, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import { IsInt, IsString, Min } from 'class-validator';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpCallToolResult, McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import { resolveMcpOptions } from '../config/mcp.options';
import type { JsonRpcMessage } from '../../protocol/jsonrpc';
import { McpTool } from '../decorators/mcp-tool.decorator';
import { McpMetadataAccessor } from '../decorators/mcp-metadata.accessor';
import { isPropagated, propagateFromHandlers } from './handler-errors';
import { Toolset, type ToolsetIdentity } from './toolset';
import { ToolsetExplorer } from '../toolset.explorer';
import { encodeCursor } from '../tools/list-cursor';
import type { RegisteredTool } from '../tools/registered-tool';

const principal = { key: 'alice', label: 'Alice', raw: { key: 'alice' } };
const baseContext: McpDeliveryContext = { principal, sessionId: 's-1', protocolVersion: '2025-11-25' };

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
}
function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res) => (resolve = res));
  return { promise, resolve };
}

class EchoInput {
  @IsString()
  text: string;

  @IsInt()
  @Min(1)
  times = 1;
}

/** What the slow tool saw, so that tests can wait on it instead of sleeping. */
const slow = {
  started: deferred<McpToolContext>(),
  release: deferred(),
  reset() {
    this.started = deferred<McpToolContext>();
    this.release = deferred();
  },
};

@Injectable()
class SpecTools {
  @McpTool({ description: 'Echoes text', input: EchoInput })
  echo({ text, times }: EchoInput) {
    return text.repeat(times);
  }

  @McpTool({
    description: 'Takes an email',
    input: { type: 'object', properties: { to: { type: 'string', format: 'email' } }, required: ['to'] },
  })
  mail({ to }: { to: string }) {
    return `sent to ${to}`;
  }

  @McpTool({ description: 'Always fails' })
  fail(): string {
    throw new Error('the weather service is down');
  }

  @McpTool({ description: 'Throws a string' })
  failWithString(): string {
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- the case under test: a thrown non-Error
    throw 'plain string failure';
  }

  @McpTool({ description: 'Fails asynchronously' })
  async failAsync(): Promise<string> {
    await Promise.resolve();
    throw new TypeError('async failure');
  }

  @McpTool({ description: 'Throws a JSON-RPC error' })
  rpcFail(): string {
    throw new McpRpcError(-32002, 'Resource not found', { uri: 'file:///missing' });
  }

  @McpTool({ description: 'Returns a string' })
  asString() {
    return 'plain text';
  }

  @McpTool({ description: 'Returns content blocks' })
  asArray() {
    return [
      { type: 'text', text: 'first' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ];
  }

  @McpTool({ description: 'Returns a full result' })
  asResult(): McpCallToolResult {
    return { content: [{ type: 'text', text: 'custom' }], isError: true, _meta: { 'example.com/trace': 'abc' } };
  }

  @McpTool({ description: 'Returns nothing' })
  asUndefined(): void {
    return undefined;
  }

  @McpTool({ description: 'Returns a plain object without an output schema' })
  asObject() {
    return { a: 1, b: 'two' };
  }

  @McpTool({
    description: 'Structured output',
    output: {
      type: 'object',
      properties: { celsius: { type: 'number' }, city: { type: 'string' } },
      required: ['celsius', 'city'],
    },
  })
  structured() {
    return { celsius: 21.5, city: 'Oslo' };
  }

  @McpTool({
    description: 'Structured output that breaks its schema',
    output: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] },
  })
  structuredBad() {
    return { celsius: 'hot' };
  }

  @McpTool({
    description: 'Structured output given as a full result',
    output: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  })
  structuredResult(): McpCallToolResult {
    return { content: [{ type: 'text', text: 'n is 3' }], structuredContent: { n: 3 } };
  }

  @McpTool({ description: 'Waits until cancelled or released' })
  async slow(_args: unknown, ctx: McpToolContext) {
    slow.started.resolve(ctx);
    const aborted = new Promise<void>((resolve) =>
      ctx.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    await Promise.race([aborted, slow.release.promise]);
    return ctx.signal.aborted ? `aborted: ${(ctx.signal.reason as Error).message}` : 'finished';
  }
}

@Injectable()
class FiveTools {
  @McpTool({ description: '1' })
  t1() {
    return '1';
  }
  @McpTool({ description: '2' })
  t2() {
    return '2';
  }
  @McpTool({ description: '3' })
  t3() {
    return '3';
  }
  @McpTool({ description: '4' })
  t4() {
    return '4';
  }
  @McpTool({ description: '5' })
  t5() {
    return '5';
  }
}

const apps: TestingModule[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function boot(
  providers: Provider[],
  pageSize = 100,
  identity: ToolsetIdentity = { name: 'spec-server', version: '1.2.3' },
): Promise<Toolset> {
  const toolset = new Toolset('spec', identity, pageSize);
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule],
    providers: [
      ...providers,
      ToolsetExplorer,
      McpMetadataAccessor,
      { provide: Toolset, useValue: toolset },
      {
        provide: MCP_MODULE_OPTIONS,
        useValue: resolveMcpOptions({ auth: () => 'alice', advanced: { pageSize } }, { mount: 'spec', path: '/mcp' }),
      },
    ],
  }).compile();
  await moduleRef.init();
  apps.push(moduleRef);
  return toolset;
}

let nextId = 100;
async function request(toolset: Toolset, method: string, params?: Record<string, unknown>, context = baseContext) {
  const id = nextId++;
  const message = (
    params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params }
  ) as JsonRpcMessage;
  return { id, response: await toolset.deliver(message, context) };
}

async function result(
  toolset: Toolset,
  method: string,
  params?: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const { id, response } = await request(toolset, method, params);
  expect(response).toMatchObject({ jsonrpc: '2.0', id });
  if (!response || !('result' in response)) throw new Error(`expected a result, got ${JSON.stringify(response)}`);
  return response.result;
}

async function rpcError(toolset: Toolset, method: string, params?: Record<string, unknown>) {
  const { id, response } = await request(toolset, method, params);
  if (!response || !('error' in response)) throw new Error(`expected an error, got ${JSON.stringify(response)}`);
  expect(response.id).toBe(id);
  expect(response).not.toHaveProperty('result');
  return response.error;
}

const callTool = (toolset: Toolset, name: string, args?: Record<string, unknown>) =>
  result(toolset, 'tools/call', args === undefined ? { name } : { name, arguments: args });

describe('Toolset.deliver', () => {
  let toolset: Toolset;
  beforeEach(async () => {
    toolset = await boot([SpecTools]);
  });

  describe('initialize', () => {
    it.each(['2025-11-25', '2025-06-18', '2025-03-26'])('echoes the supported protocol version %s', async (version) => {
      const res = await result(toolset, 'initialize', {
        protocolVersion: version,
        capabilities: {},
        clientInfo: { name: 'spec-client', version: '0' },
      });
      expect(res).toEqual({
        protocolVersion: version,
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: 'spec-server', version: '1.2.3' },
      });
    });

    it.each([
      ['an unknown version', '1999-01-01'],
      ['a future version', '2030-01-01'],
      ['no version', undefined],
    ])('answers %s with the latest version 2025-11-25', async (_label, version) => {
      const res = await result(toolset, 'initialize', {
        protocolVersion: version,
        capabilities: {},
        clientInfo: { name: 'c', version: '0' },
      });
      expect(res.protocolVersion).toBe('2025-11-25');
    });

    it('answers an initialize without params', async () => {
      expect((await result(toolset, 'initialize')).protocolVersion).toBe('2025-11-25');
    });

    it('announces title and instructions when configured', async () => {
      const titled = await boot([], 100, {
        name: 'srv',
        version: '2',
        title: 'Server Title',
        instructions: 'Use echo.',
      });
      const res = await result(titled, 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'c', version: '0' },
      });
      expect(res.serverInfo).toEqual({ name: 'srv', version: '2', title: 'Server Title' });
      expect(res.instructions).toBe('Use echo.');
    });
  });

  it('answers ping with an empty result', async () => {
    expect(await result(toolset, 'ping')).toEqual({});
  });

  it('answers an unknown method with -32601, keeping the id', async () => {
    const error = await rpcError(toolset, 'resources/list');
    expect(error.code).toBe(-32601);
    expect(error.message).toContain('resources/list');
  });

  describe('tools/call protocol errors', () => {
    it('answers a call without a name with -32602', async () => {
      expect((await rpcError(toolset, 'tools/call', { arguments: {} })).code).toBe(-32602);
      expect((await rpcError(toolset, 'tools/call')).code).toBe(-32602);
    });

    it('answers a non-string name with -32602', async () => {
      expect((await rpcError(toolset, 'tools/call', { name: 42 })).code).toBe(-32602);
    });

    it('answers an unknown tool with -32602 naming it', async () => {
      const error = await rpcError(toolset, 'tools/call', { name: 'nope', arguments: {} });
      expect(error.code).toBe(-32602);
      expect(error.message).toContain('nope');
    });
  });

  describe('tools/call results', () => {
    it('validates DTO arguments and calls the handler with the transformed instance', async () => {
      expect(await callTool(toolset, 'echo', { text: 'ab', times: 2, extra: true })).toEqual({
        content: [{ type: 'text', text: 'abab' }],
      });
    });

    it('answers invalid DTO arguments with an isError result naming the tool and the property', async () => {
      const res = await callTool(toolset, 'echo', { text: 5, times: 0 });
      expect(res.isError).toBe(true);
      const text = (res.content as Array<{ text: string }>)[0].text;
      expect(text).toContain('Invalid arguments for tool "echo"');
      expect(text).toContain('text: ');
      expect(text).toContain('times: ');
    });

    it('treats missing arguments as {} (and validates them)', async () => {
      const res = await callTool(toolset, 'echo');
      expect(res.isError).toBe(true);
      expect((res.content as Array<{ text: string }>)[0].text).toContain('text: ');
    });

    it('answers arguments that break a raw JSON Schema with an isError result naming the property', async () => {
      expect(await callTool(toolset, 'mail', { to: 'bob@example.com' })).toEqual({
        content: [{ type: 'text', text: 'sent to bob@example.com' }],
      });
      const res = await callTool(toolset, 'mail', { to: 'bob' });
      expect(res.isError).toBe(true);
      expect((res.content as Array<{ text: string }>)[0].text).toContain('to: must match format "email"');
    });

    it('turns a thrown Error into an isError result with its message', async () => {
      expect(await callTool(toolset, 'fail')).toEqual({
        content: [{ type: 'text', text: 'the weather service is down' }],
        isError: true,
      });
      expect(await callTool(toolset, 'failAsync')).toEqual({
        content: [{ type: 'text', text: 'async failure' }],
        isError: true,
      });
    });

    it('turns a thrown string into an isError result with that string', async () => {
      expect(await callTool(toolset, 'failWithString')).toEqual({
        content: [{ type: 'text', text: 'plain string failure' }],
        isError: true,
      });
    });

    it('turns a thrown McpRpcError into that JSON-RPC error', async () => {
      const error = await rpcError(toolset, 'tools/call', { name: 'rpcFail', arguments: {} });
      expect(error).toEqual({ code: -32002, message: 'Resource not found', data: { uri: 'file:///missing' } });
    });

    it('maps a returned string to one text block', async () => {
      expect(await callTool(toolset, 'asString')).toEqual({ content: [{ type: 'text', text: 'plain text' }] });
    });

    it('maps a returned array to content blocks', async () => {
      expect(await callTool(toolset, 'asArray')).toEqual({
        content: [
          { type: 'text', text: 'first' },
          { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        ],
      });
    });

    it('passes a returned CallToolResult through unchanged', async () => {
      expect(await callTool(toolset, 'asResult')).toEqual({
        content: [{ type: 'text', text: 'custom' }],
        isError: true,
        _meta: { 'example.com/trace': 'abc' },
      });
    });

    it('maps undefined to an empty content list', async () => {
      expect(await callTool(toolset, 'asUndefined')).toEqual({ content: [] });
    });

    it('maps a plain object (no output schema) to its JSON text', async () => {
      const res = await callTool(toolset, 'asObject');
      expect(res).toEqual({ content: [{ type: 'text', text: JSON.stringify({ a: 1, b: 'two' }) }] });
      expect(res).not.toHaveProperty('structuredContent');
    });

    it('sends valid structured output as structuredContent with a JSON text mirror', async () => {
      const res = await callTool(toolset, 'structured');
      expect(res.structuredContent).toEqual({ celsius: 21.5, city: 'Oslo' });
      expect(res.content).toEqual([{ type: 'text', text: expect.any(String) }]);
      expect(JSON.parse((res.content as Array<{ text: string }>)[0].text)).toEqual({ celsius: 21.5, city: 'Oslo' });
      expect(res.isError).toBeFalsy();
    });

    it('answers structured output that breaks the output schema with an isError result naming the problem', async () => {
      const res = await callTool(toolset, 'structuredBad');
      expect(res.isError).toBe(true);
      expect(res).not.toHaveProperty('structuredContent');
      const text = (res.content as Array<{ text: string }>)[0].text;
      expect(text).toContain('structuredBad');
      expect(text).toContain('output schema');
      expect(text).toContain('celsius');
    });

    it('passes a full result with valid structuredContent through', async () => {
      expect(await callTool(toolset, 'structuredResult')).toEqual({
        content: [{ type: 'text', text: 'n is 3' }],
        structuredContent: { n: 3 },
      });
    });

    it('publishes the output schema in tools/list', async () => {
      const tools = (await result(toolset, 'tools/list')).tools as Array<Record<string, unknown>>;
      expect(tools.find((t) => t.name === 'structured')?.outputSchema).toEqual({
        type: 'object',
        properties: { celsius: { type: 'number' }, city: { type: 'string' } },
        required: ['celsius', 'city'],
      });
    });
  });

  describe('notifications and responses', () => {
    it.each([
      ['notifications/initialized', undefined],
      ['notifications/roots/list_changed', {}],
      ['notifications/cancelled', { requestId: 'nothing-running' }],
      ['some/unknown/notification', { a: 1 }],
    ])('answers the notification %s with null', async (method, params) => {
      const message = (
        params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params }
      ) as JsonRpcMessage;
      await expect(toolset.deliver(message, baseContext)).resolves.toBeNull();
    });

    it('does not run a tool for a tools/call sent as a notification', async () => {
      slow.reset();
      let ran = false;
      void slow.started.promise.then(() => (ran = true));
      await expect(
        toolset.deliver({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'slow' } }, baseContext),
      ).resolves.toBeNull();
      // A handler started on a later turn would have run by now.
      await new Promise((resolve) => setImmediate(resolve));
      expect(ran).toBe(false);
      expect(toolset.inFlightCount).toBe(0);
    });

    it('answers a client response with null', async () => {
      await expect(toolset.deliver({ jsonrpc: '2.0', id: 1, result: {} }, baseContext)).resolves.toBeNull();
      await expect(
        toolset.deliver({ jsonrpc: '2.0', id: 2, error: { code: -1, message: 'x' } }, baseContext),
      ).resolves.toBeNull();
    });
  });

  describe('cancellation', () => {
    beforeEach(() => slow.reset());

    it('aborts the running handler’s ctx.signal on notifications/cancelled, with the reason', async () => {
      const call = toolset.deliver(
        { jsonrpc: '2.0', id: 'c-1', method: 'tools/call', params: { name: 'slow', arguments: {} } },
        baseContext,
      );
      const ctx = await slow.started.promise;
      expect(ctx.signal.aborted).toBe(false);
      const ack = await toolset.deliver(
        {
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: 'c-1', reason: 'user pressed stop' },
        },
        baseContext,
      );
      expect(ack).toBeNull();
      expect(ctx.signal.aborted).toBe(true);
      expect((ctx.signal.reason as Error).message).toBe('user pressed stop');
      await expect(call).resolves.toMatchObject({
        id: 'c-1',
        result: { content: [{ type: 'text', text: 'aborted: user pressed stop' }] },
      });
    });

    it('cancels a numeric request id', async () => {
      const call = toolset.deliver(
        { jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'slow' } },
        baseContext,
      );
      const ctx = await slow.started.promise;
      await toolset.deliver(
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77 } },
        baseContext,
      );
      expect(ctx.signal.aborted).toBe(true);
      await call;
    });

    it('does not let another session cancel the request, nor a lookalike id of another type', async () => {
      const call = toolset.deliver(
        { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'slow' } },
        baseContext,
      );
      const ctx = await slow.started.promise;
      await toolset.deliver(
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } },
        { ...baseContext, sessionId: 's-other' },
      );
      await toolset.deliver(
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: '5' } },
        baseContext,
      );
      expect(ctx.signal.aborted).toBe(false);
      slow.release.resolve();
      await expect(call).resolves.toMatchObject({ id: 5, result: { content: [{ type: 'text', text: 'finished' }] } });
    });

    it('gives the abort a default reason when the cancellation has none', async () => {
      const call = toolset.deliver(
        { jsonrpc: '2.0', id: 'no-reason', method: 'tools/call', params: { name: 'slow' } },
        baseContext,
      );
      const ctx = await slow.started.promise;
      await toolset.deliver(
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'no-reason' } },
        baseContext,
      );
      expect((ctx.signal.reason as Error).message).toBe('Cancelled by the client');
      await call;
    });

    it('does not abort on another notification that names the request', async () => {
      const call = toolset.deliver(
        { jsonrpc: '2.0', id: 'p-1', method: 'tools/call', params: { name: 'slow' } },
        baseContext,
      );
      const ctx = await slow.started.promise;
      await toolset.deliver(
        {
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { requestId: 'p-1', progressToken: 'p-1', progress: 1 },
        },
        baseContext,
      );
      expect(ctx.signal.aborted).toBe(false);
      slow.release.resolve();
      await expect(call).resolves.toMatchObject({
        id: 'p-1',
        result: { content: [{ type: 'text', text: 'finished' }] },
      });
    });

    it('keeps a second request of the same id cancellable after the first one ended (two stateless callers)', async () => {
      const stateless: McpDeliveryContext = { ...baseContext, sessionId: null, protocolVersion: '2026-07-28' };
      const request = { jsonrpc: '2.0', id: 'same', method: 'tools/call', params: { name: 'slow' } } as const;
      let endFirst!: () => void;
      const first = toolset.runCancellable(
        request,
        stateless,
        () => new Promise<void>((resolve) => (endFirst = resolve)),
      );
      let secondSignal!: AbortSignal;
      const second = toolset.runCancellable(request, stateless, (ctx) => {
        secondSignal = ctx.signal;
        return new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      });
      endFirst();
      await first;
      expect(toolset.inFlightCount).toBe(1);
      await toolset.deliver(
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'same' } },
        stateless,
      );
      expect(secondSignal.aborted).toBe(true);
      await second;
      expect(toolset.inFlightCount).toBe(0);
    });

    it('aborts ctx.signal when the delivery context’s signal aborts (the client went away)', async () => {
      const outer = new AbortController();
      const call = toolset.deliver(
        { jsonrpc: '2.0', id: 'gone', method: 'tools/call', params: { name: 'slow' } },
        { ...baseContext, signal: outer.signal },
      );
      const ctx = await slow.started.promise;
      outer.abort(new Error('connection closed'));
      expect(ctx.signal.aborted).toBe(true);
      await expect(call).resolves.toMatchObject({
        result: { content: [{ type: 'text', text: 'aborted: connection closed' }] },
      });
    });
  });
});

describe('Toolset.deliver failures that are not the tool’s', () => {
  function handMadeTool(overrides: Partial<RegisteredTool>): RegisteredTool {
    return {
      name: 'broken',
      owner: 'Handmade#broken',
      definition: { name: 'broken', description: 'x', inputSchema: { type: 'object' } },
      validateInput: (value) => ({ ok: true, value }),
      invoke: async () => 'should not matter',
      ...overrides,
    };
  }

  it('rejects (no made-up success) when validateInput throws', async () => {
    const toolset = new Toolset('spec', { name: 's', version: '1' }, 100);
    const bug = new Error('validator crashed');
    let invoked = false;
    toolset.register(
      handMadeTool({
        validateInput: () => {
          throw bug;
        },
        invoke: async () => {
          invoked = true;
          return 'x';
        },
      }),
    );
    await expect(
      toolset.deliver(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'broken', arguments: {} } },
        baseContext,
      ),
    ).rejects.toBe(bug);
    expect(invoked).toBe(false);
  });

  it('rejects when an async validateInput rejects', async () => {
    const toolset = new Toolset('spec', { name: 's', version: '1' }, 100);
    toolset.register(handMadeTool({ validateInput: async () => Promise.reject(new Error('database down')) }));
    await expect(
      toolset.deliver({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'broken' } }, baseContext),
    ).rejects.toThrow('database down');
  });
});

describe('tools/list pagination', () => {
  it('pages through the tools with a cursor chain, in registration order', async () => {
    const toolset = await boot([FiveTools], 2);
    const first = await result(toolset, 'tools/list');
    expect((first.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['t1', 't2']);
    expect(typeof first.nextCursor).toBe('string');

    const second = await result(toolset, 'tools/list', { cursor: first.nextCursor });
    expect((second.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['t3', 't4']);
    expect(typeof second.nextCursor).toBe('string');
    expect(second.nextCursor).not.toBe(first.nextCursor);

    const third = await result(toolset, 'tools/list', { cursor: second.nextCursor });
    expect((third.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['t5']);
    expect(third).not.toHaveProperty('nextCursor');
  });

  it('lists every tool on one page when they fit, without nextCursor', async () => {
    const toolset = await boot([FiveTools], 5);
    const page = await result(toolset, 'tools/list');
    expect((page.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['t1', 't2', 't3', 't4', 't5']);
    expect(page).not.toHaveProperty('nextCursor');
    expect((page.tools as Array<Record<string, unknown>>)[0]).toEqual({
      name: 't1',
      description: '1',
      inputSchema: { type: 'object', additionalProperties: false },
    });
  });

  it('answers an empty toolset with an empty list', async () => {
    const toolset = await boot([], 2);
    expect(await result(toolset, 'tools/list')).toEqual({ tools: [] });
  });

  it.each([
    ['garbage', 'not-a-cursor'],
    ['a number', 1],
    ['a cursor past the last page', encodeCursor(3)],
    ['a cursor for page zero', encodeCursor(0)],
    ['a base64 non-cursor', Buffer.from('{"p":"1"}').toString('base64url')],
    ['an over-long string', 'x'.repeat(200)],
  ])('answers %s as cursor with -32602', async (_label, cursor) => {
    const toolset = await boot([FiveTools], 2);
    const error = await rpcError(toolset, 'tools/list', { cursor });
    expect(error.code).toBe(-32602);
    expect(error.message).toMatch(/cursor/i);
  });

  it('re-paginates when a tool is registered after a listing', async () => {
    const toolset = await boot([FiveTools], 2);
    await result(toolset, 'tools/list');
    toolset.register({
      name: 't6',
      owner: 'Late#t6',
      definition: { name: 't6', description: '6', inputSchema: { type: 'object' } },
      validateInput: (value) => ({ ok: true, value }),
      invoke: async () => '6',
    });
    const first = await result(toolset, 'tools/list');
    const second = await result(toolset, 'tools/list', { cursor: first.nextCursor });
    const third = await result(toolset, 'tools/list', { cursor: second.nextCursor });
    expect((third.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['t5', 't6']);
  });
});

class PropagatedSignal extends Error {}
propagateFromHandlers(PropagatedSignal);
class SubclassOfPropagated extends PropagatedSignal {}

@Injectable()
class PropagatingTools {
  @McpTool({ description: 'Throws a class handlers must not swallow' })
  signal(): string {
    throw new PropagatedSignal('carried by the transport');
  }

  @McpTool({ description: 'Throws a subclass of it' })
  subclass(): string {
    throw new SubclassOfPropagated('also carried');
  }
}

describe('Toolset methods, capabilities and identity', () => {
  it('serves another method with its handler, which gets the request and the delivery context', async () => {
    const toolset = await boot([]);
    const seen: unknown[] = [];
    toolset.handle('resources/list', async (request, context) => {
      seen.push({ method: request.method, params: request.params, principal: context.principal.key });
      return { resources: [] };
    });
    expect(await result(toolset, 'resources/list', { cursor: 'c' })).toEqual({ resources: [] });
    expect(seen).toEqual([{ method: 'resources/list', params: { cursor: 'c' }, principal: 'alice' }]);
  });

  it("answers a handler's McpRpcError as that JSON-RPC error, and rejects with any other failure", async () => {
    const toolset = await boot([]);
    toolset.handle('prompts/get', async () => {
      throw new McpRpcError(-32602, 'Unknown prompt: nope');
    });
    toolset.handle('completion/complete', async () => {
      throw new TypeError('a bug in the handler');
    });
    expect(await rpcError(toolset, 'prompts/get', { name: 'nope' })).toEqual({
      code: -32602,
      message: 'Unknown prompt: nope',
    });
    await expect(
      toolset.deliver({ jsonrpc: '2.0', id: 1, method: 'completion/complete' }, baseContext),
    ).rejects.toThrow(TypeError);
  });

  it('announces declared capabilities beside tools, and hands out copies', async () => {
    const toolset = await boot([]);
    toolset.declareCapability('resources', { subscribe: true });
    const capabilities = toolset.getCapabilities();
    expect(capabilities).toEqual({ tools: { listChanged: true }, resources: { subscribe: true } });
    capabilities.prompts = {};
    expect(toolset.getCapabilities()).toEqual({ tools: { listChanged: true }, resources: { subscribe: true } });
    const init = await result(toolset, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'c', version: '0' },
    });
    expect(init.capabilities).toEqual({ tools: { listChanged: true }, resources: { subscribe: true } });
  });

  it('hands out a copy of its identity', async () => {
    const toolset = await boot([], 100, { name: 'srv', version: '2', title: 'T' });
    const identity = toolset.getIdentity();
    expect(identity).toEqual({ name: 'srv', version: '2', title: 'T' });
    identity.name = 'changed';
    expect(toolset.getIdentity().name).toBe('srv');
  });

  it('lets a class registered with propagateFromHandlers (and its subclasses) through instead of an isError result', async () => {
    const toolset = await boot([PropagatingTools]);
    expect(isPropagated(new PropagatedSignal('x'))).toBe(true);
    expect(isPropagated(new SubclassOfPropagated('x'))).toBe(true);
    expect(isPropagated(new Error('x'))).toBe(false);
    expect(isPropagated('a string')).toBe(false);
    await expect(
      toolset.deliver({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'signal' } }, baseContext),
    ).rejects.toBeInstanceOf(PropagatedSignal);
    await expect(
      toolset.deliver({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'subclass' } }, baseContext),
    ).rejects.toBeInstanceOf(SubclassOfPropagated);
    expect(toolset.inFlightCount).toBe(0);
  });
});
