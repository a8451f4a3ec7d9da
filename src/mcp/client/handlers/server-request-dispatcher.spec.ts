import { McpRpcError } from '../../errors/mcp-rpc.errors';
import type { McpClientHandlerKind, McpClientRequestHandler } from '../interfaces/mcp-client-handlers.interface';
import type { McpClientHandlerExplorer } from './client-handler.explorer';
import { McpServerRequestDispatcher } from './server-request-dispatcher';

function dispatcher(
  handlers: Partial<Record<McpClientHandlerKind, McpClientRequestHandler>>,
  samplingTools = false,
): McpServerRequestDispatcher {
  const explorer = {
    get: (kind: McpClientHandlerKind) => handlers[kind],
    kinds: () => Object.keys(handlers) as McpClientHandlerKind[],
    samplingTools: () => samplingTools && handlers.sampling !== undefined,
  };
  return new McpServerRequestDispatcher(explorer as unknown as McpClientHandlerExplorer);
}

const elicit = (params: Record<string, unknown>) => ({
  jsonrpc: '2.0' as const,
  id: 1,
  method: 'elicitation/create',
  params,
});

describe('McpServerRequestDispatcher and elicitation modes', () => {
  it.each<[string, Partial<Record<McpClientHandlerKind, McpClientRequestHandler>>, Record<string, unknown>]>([
    ['form only', { elicitation: () => ({}) }, { elicitation: {} }],
    ['URL only', { urlElicitation: () => ({}) }, { elicitation: { url: {} } }],
    [
      'both, and roots',
      { roots: () => ({}), urlElicitation: () => ({}), elicitation: () => ({}) },
      { roots: { listChanged: false }, elicitation: { form: {}, url: {} } },
    ],
    ['none', { sampling: () => ({}) }, { sampling: {} }],
  ])('declares the elicitation modes it has handlers for: %s', (_name, handlers, capabilities) => {
    expect(dispatcher(handlers).capabilities()).toEqual(capabilities);
  });

  it('sends each mode to its handler; only forms get schema defaults', async () => {
    const seen: string[] = [];
    const answer = dispatcher({
      elicitation: () => (seen.push('form'), { action: 'accept', content: {} }),
      urlElicitation: (params, context) => (
        seen.push(`url ${String(params.url)} ${context.method}`),
        { action: 'accept' }
      ),
    }).forCall('s', '');
    expect(await answer(elicit({ mode: 'url', url: 'https://a.example', message: 'Go', elicitationId: 'e' }))).toEqual({
      action: 'accept',
    });
    const schema = { type: 'object', properties: { n: { type: 'number', default: 3 } } };
    expect(await answer(elicit({ message: 'N?', requestedSchema: schema }))).toEqual({
      action: 'accept',
      content: { n: 3 },
    });
    expect(seen).toEqual(['url https://a.example elicitation/create', 'form']);
  });

  it('answers a mode without a handler with -32602, and elicitation without any handler with -32601', async () => {
    const formOnly = dispatcher({ elicitation: () => ({ action: 'accept' }) }).forCall('s', '');
    await expect(formOnly(elicit({ mode: 'url', url: 'https://a.example', message: 'Go' }))).rejects.toEqual(
      new McpRpcError(-32602, 'Invalid params: this client does not support URL mode elicitation'),
    );
    const urlOnly = dispatcher({ urlElicitation: () => ({ action: 'accept' }) }).forCall('s', '');
    const refusal = await urlOnly(elicit({ message: 'N?', requestedSchema: {} })).catch((error: McpRpcError) =>
      error.toJsonRpc(),
    );
    expect(refusal).toEqual({
      code: -32602,
      message: 'Invalid params: this client does not support form mode elicitation',
    });
    const unknown = await urlOnly(elicit({ mode: 'voice', message: 'Say' })).catch((error: McpRpcError) =>
      error.toJsonRpc(),
    );
    expect(unknown).toEqual({ code: -32602, message: 'Invalid params: unknown elicitation mode "voice"' });
    const none = await dispatcher({})
      .forCall(
        's',
        '',
      )(elicit({ message: 'N?' }))
      .catch((error: McpRpcError) => error.toJsonRpc());
    expect(none).toEqual({ code: -32601, message: 'Method not found: elicitation/create' });
  });
});

const sample = (params: Record<string, unknown>) => ({
  jsonrpc: '2.0' as const,
  id: 2,
  method: 'sampling/createMessage',
  params,
});

describe('McpServerRequestDispatcher and tool use in sampling', () => {
  const messages = [{ role: 'user', content: { type: 'text', text: 'Weather?' } }];
  const tools = [{ name: 'get_weather', inputSchema: { type: 'object' } }];

  it("adds roots, sampling and form elicitation for a call that answers them itself, keeping the handlers' richer entries", () => {
    expect(dispatcher({}).capabilities(true)).toEqual({ roots: { listChanged: false }, sampling: {}, elicitation: {} });
    expect(dispatcher({ sampling: () => ({}) }, true).capabilities(true)).toEqual({
      roots: { listChanged: false },
      sampling: { tools: {} },
      elicitation: {},
    });
  });

  it("adds what a server's announce names on its shared handshakes, keeping the handlers' richer entries", () => {
    expect(dispatcher({}).capabilities(false, { elicitation: true, roots: false })).toEqual({ elicitation: {} });
    expect(dispatcher({ sampling: () => ({}) }, true).capabilities(false, { sampling: true, roots: true })).toEqual({
      roots: { listChanged: false },
      sampling: { tools: {} },
    });
    expect(dispatcher({}).capabilities(false, {})).toEqual({});
  });

  it('declares sampling.tools only when the sampling handler accepts tool use', () => {
    expect(dispatcher({ sampling: () => ({}) }, true).capabilities()).toEqual({ sampling: { tools: {} } });
    expect(dispatcher({ sampling: () => ({}) }, false).capabilities()).toEqual({ sampling: {} });
  });

  it('hands tools and toolChoice to a handler that accepts tool use, unchanged', async () => {
    const seen: Record<string, unknown>[] = [];
    const answer = dispatcher(
      { sampling: (params) => (seen.push(params), { role: 'assistant', content: [], model: 'm' }) },
      true,
    ).forCall('s', '');
    const params = { messages, tools, toolChoice: { mode: 'required' }, maxTokens: 5 };
    await answer(sample(params));
    expect(seen).toEqual([{ messages, tools, toolChoice: { mode: 'required' }, maxTokens: 5 }]);
  });

  it.each([
    [{ messages, tools, maxTokens: 5 }, 'tools'],
    [{ messages, toolChoice: { mode: 'none' }, maxTokens: 5 }, 'toolChoice'],
    [{ messages, tools, toolChoice: { mode: 'auto' }, maxTokens: 5 }, 'tools and toolChoice'],
  ])('refuses %j with -32602 before the handler runs when it did not declare tool use', async (params, named) => {
    let called = 0;
    const answer = dispatcher({ sampling: () => (called++, {}) }).forCall('s', '');
    const refusal = await answer(sample(params)).catch((error: McpRpcError) => error.toJsonRpc());
    expect(refusal).toEqual({
      code: -32602,
      message: `Invalid params: this client does not support tool use in sampling (capabilities.sampling.tools), but the request carries ${named}`,
    });
    expect(called).toBe(0);
    expect(await answer(sample({ messages, maxTokens: 5 }))).toEqual({});
    expect(called).toBe(1);
  });
});

describe("McpServerRequestDispatcher and a call's own answerer", () => {
  it("answers with the call's answerer before the app-wide handlers, with the call's signal; ping stays its own", async () => {
    const seen: unknown[] = [];
    const controller = new AbortController();
    const answer = dispatcher({ elicitation: () => ({ action: 'decline' }) }).forCall(
      's',
      '',
      async (request, options) => (seen.push(request, options.signal), { action: 'accept', content: { name: 'Ada' } }),
      controller.signal,
    );
    expect(await answer(elicit({ message: 'Name?', requestedSchema: {} }))).toEqual({
      action: 'accept',
      content: { name: 'Ada' },
    });
    expect(seen).toEqual([
      { method: 'elicitation/create', params: { message: 'Name?', requestedSchema: {} } },
      controller.signal,
    ]);
    expect(await answer({ jsonrpc: '2.0', id: 2, method: 'ping' })).toEqual({});
    expect(seen).toHaveLength(2);
  });

  it("passes the answerer's error on as it is, and gives it empty params when the request had none", async () => {
    const answer = dispatcher({}).forCall('s', '', async (request) => {
      throw new McpRpcError(-32601, `Method not found: ${request.method} ${JSON.stringify(request.params)}`);
    });
    await expect(answer({ jsonrpc: '2.0', id: 3, method: 'roots/list' })).rejects.toMatchObject({
      code: -32601,
      message: 'Method not found: roots/list {}',
    });
  });
});
