import type { McpToolContext } from '../interfaces/mcp-tool-context.interface';
import { StatelessInputChannel } from '../server/stateless/input-channel';
import { askCaller, keptRound, stateOf, upstreamRound, type UpstreamRound } from './upstream-input-rounds';

/**
 * The part of a tool context `askCaller` uses, over a real 2026-07-28 input channel holding the
 * caller's answers: a request it has no answer to records itself and throws `InputRequiredSignal`.
 */
function callerWith(answers: Record<string, unknown>): { context: McpToolContext; channel: StatelessInputChannel } {
  const channel = new StatelessInputChannel(answers);
  const context = {
    elicit: (first: unknown, schema?: Record<string, unknown>, extra?: Record<string, unknown>) =>
      typeof first === 'string'
        ? channel.request('elicitation/create', { message: first, requestedSchema: schema, ...extra }, extra)
        : channel.request('elicitation/create', first as Record<string, unknown>, first as never),
    sample: (params: Record<string, unknown>, options?: { key?: string }) =>
      channel.request('sampling/createMessage', params, options),
    listRoots: async (options?: { key?: string }) => (await channel.request('roots/list', {}, options)).roots,
  } as unknown as McpToolContext;
  return { context, channel };
}

const round: UpstreamRound = {
  state: 'upstream-state',
  round: 2,
  requests: {
    who: { method: 'elicitation/create', params: { message: 'Your name?', requestedSchema: { type: 'object' } } },
    site: { method: 'elicitation/create', params: { mode: 'url', url: 'https://a.example/login', message: 'Sign in' } },
    line: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
    where: { method: 'roots/list' },
  },
};

describe('the upstream input rounds a 2026-07-28 caller answers through the gateway', () => {
  it('asks every request the caller has no answer to, under keys of the gateway, then stops the round', async () => {
    const { context, channel } = callerWith({ 'upstream-2-line': { role: 'assistant', content: {}, model: 'm' } });
    await expect(askCaller(context, round)).rejects.toMatchObject({
      name: 'InputRequiredSignal',
      key: 'upstream-2-who',
    });
    expect(Object.keys(channel.inputRequests())).toEqual(['upstream-2-who', 'upstream-2-site', 'upstream-2-where']);
    expect(channel.inputRequests()['upstream-2-site'].params).toMatchObject({
      mode: 'url',
      url: 'https://a.example/login',
    });
  });

  it("hands the caller's answers back under the upstream's keys", async () => {
    const { context } = callerWith({
      'upstream-2-who': { action: 'accept', content: { name: 'Ada' } },
      'upstream-2-site': { action: 'accept' },
      'upstream-2-line': { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' },
      'upstream-2-where': { roots: [{ uri: 'file:///w' }] },
    });
    expect(await askCaller(context, round)).toEqual({
      who: { action: 'accept', content: { name: 'Ada' } },
      site: { action: 'accept' },
      line: { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' },
      where: { roots: [{ uri: 'file:///w' }] },
    });
    expect(stateOf(round)).toEqual({ requestState: 'upstream-state' });
    expect(stateOf({ ...round, state: undefined })).toEqual({});
  });

  it('refuses a request the gateway cannot pass on', async () => {
    const { context } = callerWith({});
    await expect(askCaller(context, { round: 1, requests: { t: { method: 'tasks/get' } } })).rejects.toThrow(
      'it asked tasks/get, which the gateway cannot pass on',
    );
  });

  it("numbers an upstream's input_required after the previous round and checks its shape", () => {
    expect(
      upstreamRound('peer', { resultType: 'input_required', inputRequests: { a: { method: 'roots/list' } } }, 1),
    ).toEqual({ requests: { a: { method: 'roots/list' } }, round: 2 });
    expect(upstreamRound('peer', { requestState: 's' }, 0)).toEqual({ state: 's', requests: {}, round: 1 });
    expect(() => upstreamRound('peer', { inputRequests: [] }, 0)).toThrow('answered a malformed input_required');
    expect(() => upstreamRound('peer', { requestState: 7 }, 0)).toThrow('answered a malformed input_required');
    expect(() => upstreamRound('peer', { inputRequests: { a: { method: 3 } } }, 0)).toThrow(
      'an input request "a" that is not a request',
    );
    expect(() => upstreamRound('peer', { inputRequests: { a: { method: 'roots/list', params: [] } } }, 0)).toThrow(
      'an input request "a" that is not a request',
    );
  });

  it('reads back what a round kept, and nothing from a value of another shape', () => {
    expect(keptRound(undefined)).toBeUndefined();
    expect(keptRound(JSON.stringify(round))).toEqual(round);
    expect(keptRound(JSON.stringify({ requests: {} }))).toBeUndefined();
    expect(keptRound('[]')).toBeUndefined();
  });
});
