import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { InputRequiredSignal, StatelessInputChannel } from './input-channel';

describe('StatelessInputChannel', () => {
  it('keys a request by the name the handler gives, and numbers only the unnamed ones', async () => {
    const channel = new StatelessInputChannel({});
    await expect(channel.request('elicitation/create', { message: 'a' })).rejects.toBeInstanceOf(InputRequiredSignal);
    await expect(channel.request('elicitation/create', { message: 'b' }, { key: 'user_name' })).rejects.toBeInstanceOf(
      InputRequiredSignal,
    );
    await expect(channel.request('sampling/createMessage', { maxTokens: 1 })).rejects.toBeInstanceOf(
      InputRequiredSignal,
    );
    expect(channel.inputRequests()).toEqual({
      'elicitation-1': { method: 'elicitation/create', params: { message: 'a' } },
      user_name: { method: 'elicitation/create', params: { message: 'b' } },
      'sampling-2': { method: 'sampling/createMessage', params: { maxTokens: 1 } },
    });
  });

  it('returns the answer under the named key, records it as consumed and ignores answers nobody asked for', async () => {
    const accepted = { action: 'accept', content: { name: 'Ada' } };
    const channel = new StatelessInputChannel({ user_name: accepted, unknown_extra_key: 42 });
    await expect(channel.request('elicitation/create', {}, { key: 'user_name' })).resolves.toEqual(accepted);
    expect(channel.needsInput).toBe(false);
    expect(channel.consumedAnswers()).toEqual({ user_name: accepted });
  });

  it('refuses an answer that is not a result of the request method (-32602)', async () => {
    const channel = new StatelessInputChannel({ user_name: { content: {} }, workspace: { roots: 'no' } });
    await expect(channel.request('elicitation/create', {}, { key: 'user_name' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('user_name'),
    });
    await expect(channel.request('roots/list', {}, { key: 'workspace' })).rejects.toBeInstanceOf(McpRpcError);
  });

  it('refuses an empty key', async () => {
    await expect(new StatelessInputChannel({}).request('roots/list', {}, { key: '' })).rejects.toThrow(
      'non-empty string',
    );
  });
});
