import { McpRpcError } from '../errors/mcp-rpc.errors';
import type { McpToolContext } from '../interfaces/mcp-tool-context.interface';
import { InputRequiredSignal } from '../server/stateless/input-channel';
import { refuseWhileListing, relayToCaller, UpstreamCallRelay } from './upstream-request-relay';

/** The part of a tool context the relay uses, answering as a downstream client would. */
function contextAnswering(overrides: Partial<McpToolContext>): McpToolContext {
  return overrides as McpToolContext;
}

describe('relayToCaller', () => {
  it("answers roots/list with the caller's roots and passes URL mode elicitations on as they are", async () => {
    const urlRequests: unknown[] = [];
    const relay = relayToCaller(
      contextAnswering({
        listRoots: async () => [{ uri: 'file:///work', name: 'work' }],
        elicit: async (request: unknown) => (urlRequests.push(request), { action: 'accept', elicitationId: 'e1' }),
      }),
    );
    expect(await relay({ method: 'roots/list', params: {} }, {})).toEqual({
      roots: [{ uri: 'file:///work', name: 'work' }],
    });
    const url = { mode: 'url', url: 'https://a.example', message: 'Sign in', elicitationId: 'e1' };
    expect(await relay({ method: 'elicitation/create', params: url }, {})).toEqual({
      action: 'accept',
      elicitationId: 'e1',
    });
    expect(urlRequests).toEqual([url]);
  });

  it('passes a form with its extra params, and one without message or schema gets empty ones', async () => {
    const forms: unknown[] = [];
    const relay = relayToCaller(
      contextAnswering({
        elicit: (async (...args: unknown[]) => (forms.push(args), { action: 'decline' })) as McpToolContext['elicit'],
      }),
    );
    await relay({ method: 'elicitation/create', params: { mode: 'form', _meta: { a: 1 } } }, {});
    expect(forms).toEqual([['', {}, { _meta: { a: 1 } }]]);
  });

  it("turns the caller's missing capability into -32601 and keeps any other code; unknown methods get -32601", async () => {
    const relay = relayToCaller(
      contextAnswering({
        sample: async () => {
          throw new McpRpcError(-32021, 'The client did not declare the "sampling" capability');
        },
        listRoots: async () => {
          throw new McpRpcError(-32602, 'bad');
        },
      }),
    );
    await expect(relay({ method: 'sampling/createMessage', params: {} }, {})).rejects.toMatchObject({
      code: -32601,
      message: 'Method not found: sampling/createMessage',
    });
    await expect(relay({ method: 'roots/list', params: {} }, {})).rejects.toMatchObject({ code: -32602 });
    await expect(relay({ method: 'tasks/get', params: {} }, {})).rejects.toMatchObject({ code: -32601 });
  });
});

describe('refuseWhileListing', () => {
  it('answers every request -32601, saying no caller is there while the gateway lists', async () => {
    const failure = await refuseWhileListing({ method: 'elicitation/create', params: {} }, {}).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(McpRpcError);
    expect(failure).toMatchObject({ code: -32601 });
    expect((failure as Error).message).toContain('no caller while the gateway lists');
  });
});

describe('UpstreamCallRelay', () => {
  const elicitation = { method: 'elicitation/create', params: { message: 'Name?', requestedSchema: {} } };

  it("aborts the upstream call when the caller's answer needs another round, and rethrows what ended it", async () => {
    const caller = new AbortController();
    const round = new InputRequiredSignal('elicitation-1');
    const relay = new UpstreamCallRelay(
      contextAnswering({
        signal: caller.signal,
        elicit: async () => {
          throw round;
        },
      }),
    );
    const signal = relay.signal;
    expect(() => relay.rethrowStop()).not.toThrow();
    await expect(relay.answer(elicitation, {})).rejects.toBe(round);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(round);
    // A second request of the same call keeps the first reason.
    await expect(relay.answer(elicitation, {})).rejects.toBe(round);
    expect(() => relay.rethrowStop()).toThrow(round);
    expect(caller.signal.aborted).toBe(false);
  });

  it("passes other failures to the upstream without stopping the call, and follows the caller's signal", async () => {
    const caller = new AbortController();
    const relay = new UpstreamCallRelay(
      contextAnswering({
        signal: caller.signal,
        elicit: async () => {
          throw new McpRpcError(-32603, 'the user agent crashed');
        },
      }),
    );
    await expect(relay.answer(elicitation, {})).rejects.toThrow('the user agent crashed');
    const signal = relay.signal;
    expect(signal.aborted).toBe(false);
    expect(() => relay.rethrowStop()).not.toThrow();
    caller.abort(new Error('the caller left'));
    expect(signal.aborted).toBe(true);
  });
});
