import { JsonRpcErrorCode, classifyJsonRpc, jsonRpcError, jsonRpcResult, parseJsonRpc } from './jsonrpc';

function invalid(raw: string) {
  const classified = parseJsonRpc(raw);
  if (classified.kind !== 'invalid') throw new Error(`expected invalid, got ${classified.kind}`);
  return classified.error;
}

describe('parseJsonRpc / classifyJsonRpc', () => {
  it('answers a body that is not JSON with a parse error and a null id', () => {
    const error = invalid('{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(error).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: JsonRpcErrorCode.ParseError, message: expect.any(String) },
    });
    expect(error.error.code).toBe(-32700);
  });

  it('rejects an empty body as a parse error', () => {
    expect(invalid('').error.code).toBe(-32700);
  });

  it('rejects a batch with Invalid Request and says batches are not supported', () => {
    const error = invalid(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }]));
    expect(error.id).toBeNull();
    expect(error.error.code).toBe(-32600);
    expect(error.error.message).toMatch(/batch/i);
  });

  it.each([
    ['a string', '"hello"'],
    ['a number', '42'],
    ['null', 'null'],
    ['true', 'true'],
  ])('rejects %s as Invalid Request', (_label, raw) => {
    const error = invalid(raw);
    expect(error.id).toBeNull();
    expect(error.error.code).toBe(-32600);
  });

  it.each([
    ['missing', { id: 1, method: 'ping' }],
    ['1.0', { jsonrpc: '1.0', id: 1, method: 'ping' }],
    ['a number', { jsonrpc: 2.0, id: 1, method: 'ping' }],
  ])('rejects a message whose jsonrpc member is %s', (_label, value) => {
    expect(invalid(JSON.stringify(value)).error.code).toBe(-32600);
  });

  it('classifies a request with a numeric id', () => {
    const message = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { cursor: 'abc' } };
    expect(parseJsonRpc(JSON.stringify(message))).toEqual({ kind: 'request', message });
  });

  it('classifies a request with a string id and no params', () => {
    const message = { jsonrpc: '2.0', id: 'req-1', method: 'ping' };
    expect(parseJsonRpc(JSON.stringify(message))).toEqual({ kind: 'request', message });
  });

  it('keeps id 0 and the empty string as ids (requests, not notifications)', () => {
    expect(classifyJsonRpc({ jsonrpc: '2.0', id: 0, method: 'ping' }).kind).toBe('request');
    expect(classifyJsonRpc({ jsonrpc: '2.0', id: '', method: 'ping' }).kind).toBe('request');
  });

  it('classifies a message without id as a notification', () => {
    const message = { jsonrpc: '2.0', method: 'notifications/initialized' };
    expect(parseJsonRpc(JSON.stringify(message))).toEqual({ kind: 'notification', message });
  });

  it('classifies a notification with params', () => {
    const message = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 3, reason: 'bored' } };
    expect(classifyJsonRpc(message)).toEqual({ kind: 'notification', message });
  });

  it('classifies a success response and an error response', () => {
    const success = { jsonrpc: '2.0', id: 1, result: { roots: [] } };
    const failure = { jsonrpc: '2.0', id: 'x', error: { code: -32601, message: 'Method not found' } };
    expect(classifyJsonRpc(success)).toEqual({ kind: 'response', message: success });
    expect(classifyJsonRpc(failure)).toEqual({ kind: 'response', message: failure });
  });

  it('rejects a result without an id', () => {
    expect(invalid(JSON.stringify({ jsonrpc: '2.0', result: {} })).error.code).toBe(-32600);
  });

  it('rejects a message that has neither method nor result nor error, keeping its id', () => {
    const error = invalid(JSON.stringify({ jsonrpc: '2.0', id: 5 }));
    expect(error.id).toBe(5);
    expect(error.error.code).toBe(-32600);
  });

  it('rejects a method that is not a string', () => {
    expect(invalid(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 42 })).error.code).toBe(-32600);
  });

  it.each([
    ['null', null],
    ['a boolean', true],
    ['an object', { n: 1 }],
    ['an array', [1]],
  ])('rejects an id that is %s, answering with a null id', (_label, id) => {
    const error = invalid(JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }));
    expect(error.id).toBeNull();
    expect(error.error.code).toBe(-32600);
    expect(error.error.message).toMatch(/id/);
  });

  it('rejects non-finite numeric ids when classifying an already-parsed value', () => {
    expect(classifyJsonRpc({ jsonrpc: '2.0', id: Number.NaN, method: 'ping' }).kind).toBe('invalid');
    expect(classifyJsonRpc({ jsonrpc: '2.0', id: Number.POSITIVE_INFINITY, method: 'ping' }).kind).toBe('invalid');
  });

  it.each([
    ['an array', [1, 2]],
    ['a string', 'x'],
    ['a number', 3],
    ['null', null],
  ])('rejects params that are %s, keeping the request id', (_label, params) => {
    const error = invalid(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params }));
    expect(error.id).toBe(9);
    expect(error.error.code).toBe(-32600);
    expect(error.error.message).toMatch(/params/);
  });

  it('rejects notification params that are not an object, with a null id', () => {
    const error = invalid(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: [1] }));
    expect(error.id).toBeNull();
    expect(error.error.code).toBe(-32600);
  });
});

describe('parseJsonRpc / classifyJsonRpc messages and absent ids', () => {
  it('says what is wrong in each Invalid Request and parse error', () => {
    expect(invalid('{').error.message).toBe('Parse error: the body is not valid JSON');
    expect(invalid('"x"').error.message).toBe('Invalid Request: expected a JSON-RPC 2.0 object');
    expect(invalid('{"jsonrpc":"2.0","id":5}')).toEqual({
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32600, message: 'Invalid Request: a message needs a method, or an id with a result or an error' },
    });
  });

  it('treats an id member holding undefined as no id (a notification, not an invalid id)', () => {
    const message = { jsonrpc: '2.0', id: undefined, method: 'notifications/initialized' };
    expect(classifyJsonRpc(message)).toEqual({ kind: 'notification', message });
  });
});

describe('jsonRpcError / jsonRpcResult', () => {
  it('builds an error without data when none is given, and with data when it is', () => {
    expect(jsonRpcError(1, -32602, 'bad')).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'bad' } });
    expect('data' in jsonRpcError(1, -32602, 'bad').error).toBe(false);
    expect(jsonRpcError(null, -32603, 'boom', { why: 'x' })).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32603, message: 'boom', data: { why: 'x' } },
    });
  });

  it('builds a success response', () => {
    expect(jsonRpcResult('a', { ok: true })).toEqual({ jsonrpc: '2.0', id: 'a', result: { ok: true } });
  });
});
