import { MAX_JSON_RPC_DEPTH, jsonDepth, jsonNestsDeeperThan } from './json-depth';
import { parseJsonRpc } from './jsonrpc';
import { parseNdjsonLine } from './ndjson';

describe('JSON nesting depth', () => {
  it('counts arrays and objects, ignoring brackets inside strings and escaped quotes', () => {
    expect(jsonDepth('{"a":[{"b":"[[[{{{\\"[["}]}')).toBe(3);
    expect(jsonDepth('"x"')).toBe(0);
    expect(jsonNestsDeeperThan('['.repeat(3) + ']'.repeat(3), 2)).toBe(true);
    expect(jsonNestsDeeperThan(`[${'[],'.repeat(1000)}[]]`, 2)).toBe(false);
  });

  it('closes a level on either closing bracket, so siblings do not add up', () => {
    expect(jsonDepth('[{},{},{}]')).toBe(2);
    expect(jsonDepth('{"a":[],"b":[],"c":{}}')).toBe(2);
    expect(jsonDepth('[[],[[]],[]]')).toBe(3);
    expect(jsonNestsDeeperThan('[{},{},{}]', 2)).toBe(false);
    expect(jsonNestsDeeperThan('[{"a":{}}]', 2)).toBe(true);
  });

  it('refuses a 200,000-deep message with -32600 before parsing it, and accepts the limit itself', () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":${'['.repeat(200_000)}${']'.repeat(200_000)}}}}`;
    expect(parseJsonRpc(deep)).toEqual({
      kind: 'invalid',
      error: { jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: the message nests arrays and objects deeper than ${MAX_JSON_RPC_DEPTH} levels` } },
    });
    const atLimit = `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":${'['.repeat(MAX_JSON_RPC_DEPTH - 2)}${']'.repeat(MAX_JSON_RPC_DEPTH - 2)}}}`;
    expect(parseJsonRpc(atLimit).kind).toBe('request');
    expect(parseNdjsonLine(`{"a":${'['.repeat(MAX_JSON_RPC_DEPTH)}${']'.repeat(MAX_JSON_RPC_DEPTH)}}`)).toMatchObject({ kind: 'invalid', reason: `nested deeper than ${MAX_JSON_RPC_DEPTH} levels` });
  });
});
