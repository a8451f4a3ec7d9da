import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { McpUnsupportedSamplingToolsError } from '../../errors/mcp-sampling.errors';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { JsonRpcNotification, JsonRpcRequest } from '../../protocol/jsonrpc';
import { createHandlerContext, isLogLevelEnabled } from './handler-context.factory';

const request = (meta?: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/call',
  params: { name: 't', ...(meta ? { _meta: meta } : {}) },
});

function delivery(extra: Partial<McpDeliveryContext> = {}): McpDeliveryContext & { sent: JsonRpcNotification[] } {
  const sent: JsonRpcNotification[] = [];
  return {
    principal: { key: 'k', label: 'l', raw: 'k' },
    sessionId: 's',
    protocolVersion: '2025-11-25',
    notify: (n) => void sent.push(n),
    sent,
    ...extra,
  };
}

describe('handler context', () => {
  it('sends log messages at or above the client level only, also when the method is destructured', async () => {
    const carrier = delivery({ logLevel: 'warning' });
    const { log } = createHandlerContext('m', request(), carrier, new AbortController().signal);
    await log('info', 'quiet');
    await log('error', { detail: 1 }, 'db');
    expect(carrier.sent).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level: 'error', logger: 'db', data: { detail: 1 } },
      },
    ]);
  });

  it('sends no log message when the client asked for none', async () => {
    const carrier = delivery();
    await createHandlerContext('m', request(), carrier, new AbortController().signal).log('emergency', 'x');
    expect(carrier.sent).toEqual([]);
    expect(isLogLevelEnabled('debug', 'debug')).toBe(true);
    expect(isLogLevelEnabled('debug', 'info')).toBe(false);
  });

  it('reports progress against the client token, and nothing without one', async () => {
    const withToken = delivery();
    const { progress } = createHandlerContext(
      'm',
      request({ progressToken: 'p1' }),
      withToken,
      new AbortController().signal,
    );
    await progress(1, 4, 'a quarter');
    expect(withToken.sent).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'p1', progress: 1, total: 4, message: 'a quarter' },
      },
    ]);
    const without = delivery();
    await createHandlerContext('m', request(), without, new AbortController().signal).progress(1);
    expect(without.sent).toEqual([]);
  });

  it('stops notifying once the request is aborted', async () => {
    const carrier = delivery({ logLevel: 'debug' });
    const abort = new AbortController();
    const ctx = createHandlerContext('m', request(), carrier, abort.signal);
    abort.abort();
    await ctx.log('error', 'late');
    expect(carrier.sent).toEqual([]);
  });

  it('asks the client through the channel when it declared the capability', async () => {
    const asked: [string, Record<string, unknown>][] = [];
    const carrier = delivery({
      clientCapabilities: { elicitation: {}, roots: {} },
      client: {
        request: async (method, params) => (
          asked.push([method, params]),
          method === 'roots/list' ? { roots: [{ uri: 'file:///a' }] } : { action: 'accept', content: { ok: true } }
        ),
      },
    });
    const { elicit, listRoots } = createHandlerContext('m', request(), carrier, new AbortController().signal);
    await expect(elicit('Name?', { type: 'object', properties: {} })).resolves.toEqual({
      action: 'accept',
      content: { ok: true },
    });
    await expect(listRoots()).resolves.toEqual([{ uri: 'file:///a' }]);
    expect(asked[0]).toEqual([
      'elicitation/create',
      { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: {} } },
    ]);
  });

  it('refuses with -32021 naming the capability when the client lacks it or there is no channel', async () => {
    const noCapability = delivery({ clientCapabilities: {}, client: { request: async () => ({}) } });
    const error = await createHandlerContext('m', request(), noCapability, new AbortController().signal)
      .sample({ messages: [] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(McpRpcError);
    expect(error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
    const noChannel = delivery({ clientCapabilities: { sampling: {} } });
    await expect(
      createHandlerContext('m', request(), noChannel, new AbortController().signal).sample({}),
    ).rejects.toMatchObject({ code: -32021 });
  });

  it.each([
    ['sampling without tools', { sampling: {} }],
    ['no sampling at all', {}],
  ])(
    'refuses tools and toolChoice before sending anything when the client declared %s',
    async (_name, clientCapabilities) => {
      const asked: string[] = [];
      const carrier = delivery({ clientCapabilities, client: { request: async (method) => (asked.push(method), {}) } });
      const error = await createHandlerContext('m', request(), carrier, new AbortController().signal)
        .sample({
          messages: [],
          maxTokens: 5,
          tools: [{ name: 'w', inputSchema: { type: 'object' } }],
          toolChoice: { mode: 'auto' },
        })
        .catch((e) => e);
      expect(error).toBeInstanceOf(McpUnsupportedSamplingToolsError);
      expect(error.toJsonRpc()).toEqual({
        code: -32021,
        message:
          'The client did not declare tool use in sampling (capabilities.sampling.tools) that this sampling/createMessage with tools and toolChoice needs',
        data: { requiredCapabilities: { sampling: { tools: {} } } },
      });
      expect(error.params).toEqual(['tools', 'toolChoice']);
      expect(asked).toEqual([]);
    },
  );

  it('sends tools and toolChoice unchanged to a client that declared sampling.tools', async () => {
    const asked: [string, Record<string, unknown>][] = [];
    const carrier = delivery({
      clientCapabilities: { sampling: { tools: {} } },
      client: { request: async (method, params) => (asked.push([method, params]), { model: 'm' }) },
    });
    const params = { messages: [], maxTokens: 5, toolChoice: { mode: 'none' } };
    await expect(
      createHandlerContext('m', request(), carrier, new AbortController().signal).sample(params),
    ).resolves.toEqual({ model: 'm' });
    expect(asked).toEqual([['sampling/createMessage', { messages: [], maxTokens: 5, toolChoice: { mode: 'none' } }]]);
  });
});
