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

  it('refuses a 200,000-deep message with -32600 before parsing it', () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":${'['.repeat(200_000)}${']'.repeat(200_000)}}}}`;
    expect(parseJsonRpc(deep)).toEqual({
      kind: 'invalid',
      error: {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: 'Invalid Request: the message nests arrays and objects deeper than 128 levels',
        },
      },
    });
  });

  // The documented limit is the number itself: a change of the constant must fail here.
  it('is the documented 128 levels: a message 128 deep is parsed, one 129 deep is refused', () => {
    expect(MAX_JSON_RPC_DEPTH).toBe(128);
    // The envelope and params are two levels; 126 arrays make 128, 127 make 129.
    const nested = (arrays: number) =>
      `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":${'['.repeat(arrays)}${']'.repeat(arrays)}}}`;
    expect(jsonDepth(nested(126))).toBe(128);
    expect(jsonDepth(nested(127))).toBe(129);
    expect(parseJsonRpc(nested(126)).kind).toBe('request');
    expect(parseJsonRpc(nested(127))).toEqual({
      kind: 'invalid',
      error: {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: 'Invalid Request: the message nests arrays and objects deeper than 128 levels',
        },
      },
    });
    expect(jsonNestsDeeperThan(nested(126), 128)).toBe(false);
    expect(jsonNestsDeeperThan(nested(127), 128)).toBe(true);
  });

  it('holds a stdio line to the same 128 levels', () => {
    // One object and 127 arrays are 128 levels; one more array is 129.
    const line = (arrays: number) => `{"a":${'['.repeat(arrays)}${']'.repeat(arrays)}}`;
    expect(parseNdjsonLine(line(127)).kind).toBe('object');
    expect(parseNdjsonLine(line(128))).toMatchObject({ kind: 'invalid', reason: 'nested deeper than 128 levels' });
  });
});
