import { McpProtocolError } from '../../errors/mcp-client.errors';
import { McpInputRequiredError } from '../../errors/mcp-input-required.errors';
import type { JsonRpcRequest } from '../../protocol';
import { fulfilInputRequests } from './input-required';

describe('fulfilInputRequests', () => {
  const asked: JsonRpcRequest[] = [];
  const answer = async (request: JsonRpcRequest): Promise<Record<string, unknown>> => {
    asked.push(request);
    return { action: 'accept', content: { id: request.id } };
  };
  beforeEach(() => (asked.length = 0));

  it('answers each input request in turn with its key as id and hands requestState back untouched', async () => {
    const retry = await fulfilInputRequests(
      'wx',
      'tools/call',
      {
        inputRequests: {
          first: { method: 'elicitation/create', params: { message: 'city?' } },
          second: { method: 'roots/list' },
        },
        requestState: ' opaque.state== ',
      },
      answer,
    );
    expect(asked).toEqual([
      { jsonrpc: '2.0', id: 'first', method: 'elicitation/create', params: { message: 'city?' } },
      { jsonrpc: '2.0', id: 'second', method: 'roots/list' },
    ]);
    expect(retry).toEqual({
      inputResponses: {
        first: { action: 'accept', content: { id: 'first' } },
        second: { action: 'accept', content: { id: 'second' } },
      },
      requestState: ' opaque.state== ',
    });
  });

  it('carries only requestState when the server asks for nothing', async () => {
    await expect(fulfilInputRequests('wx', 'prompts/get', { requestState: 's1' }, answer)).resolves.toEqual({
      requestState: 's1',
    });
    expect(asked).toEqual([]);
  });

  it('carries only the responses when there is no requestState', async () => {
    await expect(fulfilInputRequests('wx', 'resources/read', { inputRequests: {} }, answer)).resolves.toEqual({
      inputResponses: {},
    });
  });

  it.each([
    [
      'a method that may not ask for input',
      'tools/list',
      { requestState: 's' },
      'which only tools/call, prompts/get and resources/read allow',
    ],
    ['an unknown method', 'no/such', { requestState: 's' }, 'which only'],
    ['inputRequests that is an array', 'tools/call', { inputRequests: [] }, 'whose inputRequests is not an object'],
    ['inputRequests that is a string', 'tools/call', { inputRequests: 'x' }, 'whose inputRequests is not an object'],
    ['a requestState that is not a string', 'tools/call', { requestState: 7 }, 'whose requestState is not a string'],
    ['neither field', 'tools/call', {}, 'but neither inputRequests nor requestState'],
    [
      'an input request that is not an object',
      'tools/call',
      { inputRequests: { k: 'ask' } },
      'whose input request "k" is not a request object',
    ],
    [
      'an input request without a method',
      'tools/call',
      { inputRequests: { k: { params: {} } } },
      'whose input request "k" is not a request object',
    ],
    [
      'an input request whose params is an array',
      'tools/call',
      { inputRequests: { k: { method: 'roots/list', params: [] } } },
      'whose input request "k" is not a request object',
    ],
  ])('rejects %s as a protocol error, asking nothing', async (_case, method, result, text) => {
    const failure = fulfilInputRequests('wx', method, result, answer);
    await expect(failure).rejects.toBeInstanceOf(McpProtocolError);
    await expect(failure).rejects.toThrow(`MCP server "wx" answered ${method} with input_required`);
    await expect(failure).rejects.toThrow(text);
    expect(asked).toEqual([]);
  });

  it('names the request a handler could not answer, and stops there', async () => {
    const calls: string[] = [];
    const refusing = async (request: JsonRpcRequest): Promise<Record<string, unknown>> => {
      calls.push(String(request.id));
      if (request.id === 'b') throw new Error('no handler for sampling');
      return {};
    };
    const failure = fulfilInputRequests(
      'wx',
      'tools/call',
      {
        inputRequests: {
          a: { method: 'roots/list' },
          b: { method: 'sampling/createMessage' },
          c: { method: 'roots/list' },
        },
      },
      refusing,
    );
    await expect(failure).rejects.toBeInstanceOf(McpInputRequiredError);
    await expect(failure).rejects.toThrow(
      'its "b" request (sampling/createMessage) could not be answered: no handler for sampling',
    );
    await expect(failure).rejects.toMatchObject({ server: 'wx', method: 'tools/call' });
    expect(calls).toEqual(['a', 'b']);
  });

  it('reports a handler that throws a non-Error by its text', async () => {
    const throwing = async (): Promise<Record<string, unknown>> => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- the case under test: a thrown non-Error
      throw 'declined';
    };
    await expect(
      fulfilInputRequests('wx', 'tools/call', { inputRequests: { a: { method: 'roots/list' } } }, throwing),
    ).rejects.toThrow('could not be answered: declined');
  });
});
