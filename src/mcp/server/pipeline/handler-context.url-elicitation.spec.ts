import { McpUnsupportedElicitationModeError } from '../../errors/mcp-elicitation.errors';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { JsonRpcRequest } from '../../protocol/jsonrpc';
import { createHandlerContext } from './handler-context.factory';

const request: JsonRpcRequest = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 't' } };

function context(clientCapabilities: Record<string, unknown>, protocolVersion = '2025-11-25') {
  const asked: Array<[string, Record<string, unknown>]> = [];
  const delivery: McpDeliveryContext = {
    principal: { key: 'k', label: 'l', raw: 'k' },
    sessionId: 's',
    protocolVersion,
    clientCapabilities,
    client: { request: async (method, params) => (asked.push([method, params]), { action: 'accept' }) },
  };
  return { ctx: createHandlerContext('m', request, delivery, new AbortController().signal), asked };
}

describe('handler context: URL mode elicitation', () => {
  it('sends the given id on a 2025 session and returns it with the answer', async () => {
    const { ctx, asked } = context({ elicitation: { url: {} } });
    const answer = await ctx.elicit({ mode: 'url', url: 'https://a.example/x', message: 'Go', elicitationId: 'e-1' });
    expect(answer).toEqual({ action: 'accept', elicitationId: 'e-1' });
    expect(asked).toEqual([
      ['elicitation/create', { mode: 'url', message: 'Go', url: 'https://a.example/x', elicitationId: 'e-1' }],
    ]);
  });

  it('generates a different id for each elicitation without one', async () => {
    const { ctx, asked } = context({ elicitation: { url: {} } });
    const first = await ctx.elicit({ mode: 'url', url: 'https://a.example/x', message: 'Go' });
    const second = await ctx.elicit({ mode: 'url', url: 'https://a.example/x', message: 'Go' });
    expect(first.elicitationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.elicitationId).not.toBe(first.elicitationId);
    expect(asked.map(([, params]) => params.elicitationId)).toEqual([first.elicitationId, second.elicitationId]);
  });

  it('sends no id on the stateless revision', async () => {
    const { ctx, asked } = context({ elicitation: { url: {} } }, '2026-07-28');
    const answer = await ctx.elicit({ mode: 'url', url: 'https://a.example/x', message: 'Go', elicitationId: 'e-2' });
    expect(answer).toEqual({ action: 'accept', elicitationId: 'e-2' });
    expect(asked).toEqual([['elicitation/create', { mode: 'url', message: 'Go', url: 'https://a.example/x' }]]);
  });

  it.each([[{}], [{ elicitation: {} }], [{ elicitation: { form: {} } }]])(
    'refuses URL mode to a client with capabilities %j',
    async (capabilities) => {
      const { ctx, asked } = context(capabilities);
      const refusal = await ctx
        .elicit({ mode: 'url', url: 'https://a.example/x', message: 'Go' })
        .catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(McpUnsupportedElicitationModeError);
      expect((refusal as McpUnsupportedElicitationModeError).toJsonRpc()).toEqual({
        code: -32021,
        message:
          'The client did not declare URL mode elicitation (capabilities.elicitation.url) that this elicitation/create needs',
        data: { requiredCapabilities: { elicitation: { url: {} } } },
      });
      expect(asked).toEqual([]);
    },
  );

  it('refuses a form to a client that declared URL mode only', async () => {
    const { ctx, asked } = context({ elicitation: { url: {} } });
    const refusal = await ctx.elicit('Name?', { type: 'object', properties: {} }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(McpUnsupportedElicitationModeError);
    expect((refusal as McpUnsupportedElicitationModeError).mode).toBe('form');
    expect((refusal as Error).message).toBe(
      'The client did not declare form mode elicitation (capabilities.elicitation.form) that this elicitation/create needs',
    );
    expect(asked).toEqual([]);
  });

  it.each([
    [{ url: 'not a url', message: 'Go' }, 'The url of a URL elicitation must be an absolute URL (got "not a url")'],
    [{ url: 'https://a.example/x', message: '' }, 'A URL elicitation needs a non-empty string "message"'],
    [
      { url: 'https://a.example/x', message: 'Go', elicitationId: '' },
      'The elicitationId of a URL elicitation must be a non-empty string',
    ],
  ])('rejects a malformed URL elicitation %j', async (fields, message) => {
    const { ctx, asked } = context({ elicitation: { url: {} } });
    await expect(ctx.elicit({ mode: 'url', ...fields })).rejects.toThrow(new TypeError(message));
    expect(asked).toEqual([]);
  });
});
