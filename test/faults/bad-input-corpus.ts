/**
 * The bad-input corpus: requests no well-behaved client sends, each with the one answer the
 * endpoint must give. `bad-input.e2e-spec.ts` sends them to a real app on PostgreSQL.
 *
 * A case runs on one revision: `2025` posts on a live 2025-11-25 session (the runner adds the
 * session id and `MCP-Protocol-Version` unless the case overrides them), `2026` posts a stateless
 * request (the runner adds the `_meta` envelope to an object body with a method, and the routing
 * headers, unless the case says otherwise).
 */

/** Which path a case takes. */
export type Revision = '2025' | '2026';

/** The answer a case must get. */
export interface Outcome {
  status: number;
  /** The JSON-RPC error code of the body; null when the status comes without a JSON-RPC body (401, 202...). */
  code: number | null;
  /**
   * Set when the right answer is a result: `true` for a success (the input is odd but legal),
   * `'isError'` for a tool result with `isError: true` (how a tool refuses bad arguments).
   */
  result?: true | 'isError';
}

/** One request of the corpus. */
export interface BadInputCase {
  name: string;
  revision: Revision;
  /** A string or Buffer is sent as is; anything else as JSON. */
  body: unknown;
  /** Header overrides; null leaves a header out; an array sends the header once per value. */
  headers?: Record<string, string | string[] | null>;
  /** Appended to the path, e.g. `?access_token=...`. */
  query?: string;
  /** 2026: send the body as given, without adding the `_meta` envelope. */
  bare?: true;
  /** 2026: leave out the routing headers (`Mcp-Method`, `Mcp-Name`). */
  noRouting?: true;
  /** Send the body this many bytes at a time with a pause between writes (slow loris). */
  trickle?: { bytes: number; pauseMs: number };
  expect: Outcome;
  /** Event rows the case must leave. */
  rows: 0 | 1;
}

/** The deadline the corpus app gives a body (`bodyTimeoutMs`). */
export const CORPUS_BODY_TIMEOUT_MS = 1_000;

const PROTO_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'] as const;

const REVISIONS: Revision[] = ['2025', '2026'];

const rpc = (status: number, code: number): Outcome => ({ status, code });
const ok: Outcome = { status: 200, code: null, result: true };
const toolError: Outcome = { status: 200, code: null, result: 'isError' };
const accepted: Outcome = { status: 202, code: null };
const unauthorized: Outcome = { status: 401, code: null };

/** Code of a JSON-RPC error answer on each revision: 2026 maps some codes to HTTP statuses. */
const unknownMethod = (revision: Revision): Outcome => (revision === '2025' ? rpc(200, -32601) : rpc(404, -32601));
const invalidParams = (): Outcome => rpc(200, -32602);
const resourceNotFound = (revision: Revision): Outcome => (revision === '2025' ? rpc(200, -32002) : rpc(200, -32602));

// Defects the corpus exposes that belong to the audit-row work (sanitizing what goes into
// mcp_events): PostgreSQL refuses these values, the row cannot be written and the request gets 500.

let nextId = 1;
const id = () => `bad-${nextId++}`;
const request = (method: string, params?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: id(),
  method,
  ...(params ? { params } : {}),
});

/** Malformed JSON-RPC envelopes: refused at the edge with 400 before any session or envelope is read. */
function envelopes(revision: Revision): BadInputCase[] {
  const parse = rpc(400, -32700);
  const invalid = rpc(400, -32600);
  const cases: [string, unknown, Outcome][] = [
    ['an empty body', '', parse],
    ['a lone BOM', '\uFEFF', parse],
    ['a BOM before the object', `\uFEFF${JSON.stringify(request('ping'))}`, parse],
    ['trailing garbage', `${JSON.stringify(request('ping'))}xyz`, parse],
    ['two objects back to back', `${JSON.stringify(request('ping'))}${JSON.stringify(request('ping'))}`, parse],
    ['a truncated object', '{"jsonrpc":"2.0","id":1,"method":"pi', parse],
    ['single quotes', "{'jsonrpc':'2.0','id':1,'method':'ping'}", parse],
    ['a NaN literal', '{"jsonrpc":"2.0","id":NaN,"method":"ping"}', parse],
    ['a JS comment', '/* hi */{"jsonrpc":"2.0","id":1,"method":"ping"}', parse],
    ['invalid UTF-8 bytes', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), invalid],
    ['null', 'null', invalid],
    ['a number', '42', invalid],
    ['a string', '"ping"', invalid],
    ['true', 'true', invalid],
    ['an empty array', '[]', invalid],
    ['a batch of two pings', JSON.stringify([request('ping'), request('ping')]), invalid],
    ['an empty object', '{}', invalid],
    ['no jsonrpc member', { id: id(), method: 'ping' }, invalid],
    ['jsonrpc "1.0"', { jsonrpc: '1.0', id: id(), method: 'ping' }, invalid],
    ['jsonrpc as the number 2.0', '{"jsonrpc":2.0,"id":1,"method":"ping"}', invalid],
    ['jsonrpc "2.0 " with a space', { jsonrpc: '2.0 ', id: id(), method: 'ping' }, invalid],
    ['an id that is an object', { jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }, invalid],
    ['an id that is an array', { jsonrpc: '2.0', id: [1], method: 'ping' }, invalid],
    ['an id that is true', { jsonrpc: '2.0', id: true, method: 'ping' }, invalid],
    ['an id of 1e400 (Infinity once parsed)', '{"jsonrpc":"2.0","id":1e400,"method":"ping"}', invalid],
    ['a method that is a number', { jsonrpc: '2.0', id: id(), method: 7 }, invalid],
    ['a method that is null', { jsonrpc: '2.0', id: id(), method: null }, invalid],
    ['params as an array', { jsonrpc: '2.0', id: id(), method: 'tools/list', params: [] }, invalid],
    ['params as a string', { jsonrpc: '2.0', id: id(), method: 'tools/list', params: 'x' }, invalid],
    ['params as a number', { jsonrpc: '2.0', id: id(), method: 'tools/list', params: 1 }, invalid],
    ['params as null', { jsonrpc: '2.0', id: id(), method: 'tools/list', params: null }, invalid],
    ['a result without an id', { jsonrpc: '2.0', result: {} }, invalid],
    ['an error that is a string', { jsonrpc: '2.0', id: id(), error: 'boom' }, invalid],
    ['neither method nor result', { jsonrpc: '2.0', id: id() }, invalid],
  ];
  return cases.map(([name, body, expect]) => ({
    name: `envelope: ${name}`,
    revision,
    body,
    bare: true,
    noRouting: true,
    expect,
    rows: 0,
  }));
}

/** Odd but legal ids: the request is served and answered with the same id. */
function odd_ids(revision: Revision): BadInputCase[] {
  const ids: [string, unknown][] = [
    ['a float id', 1.5],
    ['a negative id', -1],
    // eslint-disable-next-line no-loss-of-precision -- the case under test: an id no double holds exactly
    ['a huge integer id', 123456789012345678901234567890],
    ['an empty string id', ''],
    ['a 10 KB string id', 'i'.repeat(10_000)],
    ['an id with NUL and a lone surrogate', 'a\u0000b\ud800c'],
  ];
  return ids.map(([name, value]) => ({
    name: `id: ${name}`,
    revision,
    body: { jsonrpc: '2.0', id: value, method: 'tools/list' },
    expect: ok,
    rows: 1,
  }));
}

/** Names every JS object has, in every place a name goes. */
function protoNames(revision: Revision): BadInputCase[] {
  const cases: BadInputCase[] = [];
  for (const name of PROTO_NAMES) {
    const add = (where: string, body: unknown, expect: Outcome, extra: Partial<BadInputCase> = {}) =>
      cases.push({ name: `${name} as ${where}`, revision, body, expect, rows: 1, ...extra });
    add('a method', request(name), unknownMethod(revision));
    add('a notification method', { jsonrpc: '2.0', method: name }, accepted);
    add('a tool name', request('tools/call', { name, arguments: {} }), invalidParams());
    add('a prompt name', request('prompts/get', { name }), invalidParams());
    add('a resource URI', request('resources/read', { uri: name }), resourceNotFound(revision));
    add(
      'a _meta key',
      request('tools/call', { name: 'echo', arguments: { text: 'hi' }, _meta: { [name]: { polluted: true } } }),
      ok,
    );
    add('an argument key', request('tools/call', { name: 'echo', arguments: { text: 'hi', [name]: 'x' } }), ok);
    add(
      'a completion prompt',
      request('completion/complete', { ref: { type: 'ref/prompt', name }, argument: { name: 'language', value: 'p' } }),
      invalidParams(),
    );
    add('a list cursor', request('tools/list', { cursor: name }), invalidParams());
    if (revision === '2025') add('a log level', request('logging/setLevel', { level: name }), invalidParams());
  }
  return cases;
}

/** Parameters of the wrong type. */
function wrongTypes(revision: Revision): BadInputCase[] {
  const cases: [string, unknown, Outcome][] = [
    ['tools/call with a numeric name', request('tools/call', { name: 42, arguments: {} }), invalidParams()],
    ['tools/call without a name', request('tools/call', { arguments: {} }), invalidParams()],
    ['tools/call with arguments as an array', request('tools/call', { name: 'echo', arguments: ['hi'] }), toolError],
    ['tools/call with arguments as a string', request('tools/call', { name: 'echo', arguments: 'hi' }), toolError],
    ['tools/call with arguments null', request('tools/call', { name: 'echo', arguments: null }), toolError],
    ['tools/call with text as a number', request('tools/call', { name: 'echo', arguments: { text: 5 } }), toolError],
    ['tools/list with a cursor object', request('tools/list', { cursor: { page: 2 } }), invalidParams()],
    ['tools/list with a numeric cursor', request('tools/list', { cursor: 2 }), invalidParams()],
    ['resources/read with a numeric uri', request('resources/read', { uri: 1 }), invalidParams()],
    ['resources/read without a uri', request('resources/read', {}), invalidParams()],
    [
      'prompts/get with arguments as an array',
      request('prompts/get', { name: 'code_review', arguments: ['x'] }),
      invalidParams(),
    ],
    [
      'prompts/get with a numeric argument value',
      request('prompts/get', { name: 'code_review', arguments: { code: 1 } }),
      invalidParams(),
    ],
    [
      'completion/complete without a ref',
      request('completion/complete', { argument: { name: 'x', value: 'y' } }),
      invalidParams(),
    ],
    [
      'completion/complete with a ref string',
      request('completion/complete', { ref: 'ref/prompt', argument: { name: 'x', value: 'y' } }),
      invalidParams(),
    ],
  ];
  const all = cases.map(([name, body, expect]): BadInputCase => ({
    name: `types: ${name}`,
    revision,
    body,
    expect,
    rows: 1,
  }));
  if (revision === '2025')
    all.push({
      name: 'types: logging/setLevel with a numeric level',
      revision,
      body: request('logging/setLevel', { level: 3 }),
      expect: invalidParams(),
      rows: 1,
    });
  return all;
}

/** Huge and odd strings, keeping the whole corpus within a few megabytes. */
function oddStrings(revision: Revision): BadInputCase[] {
  const megabyteName = 'n'.repeat(1024 * 1024);
  const cases: BadInputCase[] = [
    // The 2026 routing header cannot carry a 1 MB name (Node's header limit): sent without it, the missing Mcp-Name is the error there.
    {
      name: 'strings: a 1 MB tool name',
      revision,
      body: request('tools/call', { name: megabyteName, arguments: {} }),
      noRouting: true,
      expect: revision === '2025' ? invalidParams() : rpc(400, -32020),
      rows: 1,
    },
    {
      name: 'strings: a 1 MB method name',
      revision,
      body: request(megabyteName),
      noRouting: true,
      expect: revision === '2025' ? unknownMethod(revision) : rpc(400, -32020),
      rows: 1,
    },
    {
      name: 'strings: a 1 MB prompt name',
      revision,
      body: request('prompts/get', { name: megabyteName }),
      noRouting: true,
      expect: revision === '2025' ? invalidParams() : rpc(400, -32020),
      rows: 1,
    },
    {
      name: 'strings: echo of 1 MB of text',
      revision,
      body: request('tools/call', { name: 'echo', arguments: { text: 't'.repeat(1024 * 1024) } }),
      expect: ok,
      rows: 1,
    },
    {
      name: 'strings: a resources/read URI of 2049 characters',
      revision,
      body: request('resources/read', {
        uri: `users://${'u'.repeat(2049 - 'users://'.length - '/profile'.length)}/profile`,
      }),
      expect: invalidParams(),
      rows: 1,
    },
    {
      name: 'strings: a resources/read URI of 100k characters against the template',
      revision,
      body: request('resources/read', { uri: `users://${'/'.repeat(50_000)}${'x'.repeat(50_000)}` }),
      noRouting: true,
      expect: revision === '2025' ? invalidParams() : rpc(400, -32020),
      rows: 1,
    },
    {
      name: 'strings: a resources/read URI of exactly 2048 characters',
      revision,
      body: request('resources/read', {
        uri: `users://${'u'.repeat(2048 - 'users://'.length - '/profile'.length)}/profile`,
      }),
      expect: resourceNotFound(revision),
      rows: 1,
    },
    {
      name: 'strings: a tool name with right-to-left marks',
      revision,
      body: request('tools/call', { name: '\u202eohce\u202c', arguments: {} }),
      noRouting: true,
      expect: revision === '2025' ? invalidParams() : rpc(400, -32020),
      rows: 1,
    },
    {
      name: 'strings: echo with right-to-left marks and a zero-width joiner',
      revision,
      body: request('tools/call', { name: 'echo', arguments: { text: '\u202eabc\u200d\u2066' } }),
      expect: ok,
      rows: 1,
    },
    {
      name: 'strings: echo of a lone high surrogate',
      revision,
      body: request('tools/call', { name: 'echo', arguments: { text: 'a\ud800b' } }),
      expect: ok,
      rows: 1,
    },
    {
      name: 'strings: echo of a lone low surrogate',
      revision,
      body: request('tools/call', { name: 'echo', arguments: { text: '\udc00' } }),
      expect: ok,
      rows: 1,
    },
    {
      name: 'strings: echo of a NUL character',
      revision,
      body: request('tools/call', { name: 'echo', arguments: { text: 'a\u0000b' } }),
      expect: ok,
      rows: 1,
    },
    {
      name: 'strings: a tool name with a NUL character',
      revision,
      body: request('tools/call', { name: 'ec\u0000ho', arguments: {} }),
      noRouting: true,
      expect: revision === '2025' ? invalidParams() : rpc(400, -32020),
      rows: 1,
    },
    {
      name: 'strings: a method with a NUL character',
      revision,
      body: request('pi\u0000ng'),
      noRouting: true,
      expect: revision === '2025' ? unknownMethod(revision) : rpc(400, -32020),
      rows: 1,
    },
    {
      name: 'strings: a 300-character method name',
      revision,
      body: request('m'.repeat(300)),
      noRouting: true,
      expect: revision === '2025' ? unknownMethod(revision) : rpc(400, -32020),
      rows: 1,
    },
    {
      name: 'strings: duplicate keys (the last id wins)',
      revision,
      body: '{"jsonrpc":"2.0","id":"first","id":"second","method":"ping"}',
      bare: true,
      noRouting: true,
      expect: revision === '2025' ? ok : rpc(400, -32602),
      rows: 1,
    },
  ];
  return cases;
}

/** Hostile headers on the 2025 path (the session id is the live one unless replaced). */
function hostileHeaders(): BadInputCase[] {
  const ping = () => request('ping');
  const notFound = rpc(404, -32001);
  const cases: [string, Record<string, string | string[] | null>, Outcome, 0 | 1, string?][] = [
    ['SQL in the session id', { 'Mcp-Session-Id': "' OR '1'='1'; DROP TABLE mcp_events; --" }, notFound, 0],
    ['an 8 KB session id', { 'Mcp-Session-Id': 's'.repeat(8 * 1024) }, notFound, 0],
    ['a session id of Latin-1 bytes', { 'Mcp-Session-Id': 'caf\u00e9\u00ff' }, notFound, 0],
    ['a session id with a NUL escape as text', { 'Mcp-Session-Id': '%00abc' }, notFound, 0],
    ['the live session id twice', { 'Mcp-Session-Id': ['$SESSION', '$SESSION'] }, notFound, 0],
    ['the live session id and a bogus one', { 'Mcp-Session-Id': ['$SESSION', 'bogus'] }, notFound, 0],
    ['an empty session id', { 'Mcp-Session-Id': '' }, rpc(400, -32000), 0],
    ['MCP-Protocol-Version 9999-99-99', { 'MCP-Protocol-Version': '9999-99-99' }, rpc(400, -32000), 0],
    ['MCP-Protocol-Version with Latin-1 bytes', { 'MCP-Protocol-Version': '2025-11-25\u00e9' }, rpc(400, -32000), 0],
    ['an 8 KB MCP-Protocol-Version', { 'MCP-Protocol-Version': 'v'.repeat(8 * 1024) }, rpc(400, -32000), 0],
    ['Authorization "Bearer" with nothing', { Authorization: 'Bearer' }, unauthorized, 0],
    ['Authorization "Bearer " with a space only', { Authorization: 'Bearer ' }, unauthorized, 0],
    ['Authorization Basic', { Authorization: 'Basic dG9rZW4tYWxpY2U6eA==' }, unauthorized, 0],
    ['two tokens in one header', { Authorization: 'Bearer token-alice token-bob' }, unauthorized, 0],
    [
      'two Bearer credentials in one header',
      { Authorization: 'Bearer token-alice, Bearer token-bob' },
      unauthorized,
      0,
    ],
    ['two Authorization lines', { Authorization: ['Bearer token-alice', 'Bearer token-bob'] }, unauthorized, 0],
    [
      'two Authorization lines with the same token',
      { Authorization: ['Bearer token-alice', 'Bearer token-alice'] },
      unauthorized,
      0,
    ],
    ['a token with Latin-1 bytes', { Authorization: 'Bearer token-\u00e9lice' }, unauthorized, 0],
    ['an 8 KB token', { Authorization: `Bearer ${'t'.repeat(8 * 1024)}` }, unauthorized, 0],
    ['no Authorization, the token in the query', { Authorization: null }, unauthorized, 0, '?access_token=token-alice'],
    ['a foreign Origin', { Origin: 'http://evil.example' }, rpc(403, -32000), 0],
    ['Origin null', { Origin: 'null' }, rpc(403, -32000), 0],
    ['no Content-Type', { 'Content-Type': null }, rpc(415, -32000), 0],
    ['Content-Type text/plain', { 'Content-Type': 'text/plain' }, rpc(415, -32000), 0],
    ['Content-Type with Latin-1 bytes', { 'Content-Type': 'application/json\u00e9' }, rpc(415, -32000), 0],
    ['no Accept', { Accept: null }, rpc(406, -32000), 0],
    ['Accept text/html', { Accept: 'text/html' }, rpc(406, -32000), 0],
    ['a 12 KB header of junk', { 'X-Junk': 'j'.repeat(12 * 1024) }, ok, 1],
    ['a header too large for Node (20 KB)', { 'X-Junk': 'j'.repeat(20 * 1024) }, { status: 431, code: null }, 0],
  ];
  return cases.map(([name, headers, expect, rows, query]) => ({
    name: `headers: ${name}`,
    revision: '2025',
    body: ping(),
    headers,
    query,
    expect,
    rows,
  }));
}

/** Hostile headers on the 2026 path. */
function statelessHeaders(): BadInputCase[] {
  const call = () => request('tools/call', { name: 'echo', arguments: { text: 'hi' } });
  const cases: [string, Record<string, string | string[] | null>, Outcome, 0 | 1][] = [
    [
      'MCP-Protocol-Version 9999-99-99 with a 2026 envelope',
      { 'MCP-Protocol-Version': '9999-99-99' },
      rpc(400, -32020),
      1,
    ],
    ['Mcp-Method naming another method', { 'Mcp-Method': 'tools/list' }, rpc(400, -32020), 1],
    ['Mcp-Name naming another tool', { 'Mcp-Name': 'whoami' }, rpc(400, -32020), 1],
    ['Mcp-Name with Latin-1 bytes', { 'Mcp-Name': 'ech\u00f6' }, rpc(400, -32020), 1],
    ['Mcp-Method twice', { 'Mcp-Method': ['tools/call', 'tools/call'] }, rpc(400, -32020), 1],
    ['SQL in Mcp-Name', { 'Mcp-Name': "echo'; DROP TABLE mcp_events; --" }, rpc(400, -32020), 1],
    // The `_meta` envelope makes it stateless; a stray session header does not change that.
    ['a session id on a stateless request', { 'Mcp-Session-Id': 'not-a-session' }, ok, 1],
    ['Authorization "Bearer" with nothing', { Authorization: 'Bearer' }, unauthorized, 0],
    ['two tokens in one header', { Authorization: 'Bearer token-alice token-bob' }, unauthorized, 0],
    ['two Authorization lines', { Authorization: ['Bearer token-alice', 'Bearer token-bob'] }, unauthorized, 0],
  ];
  return cases.map(([name, headers, expect, rows]) => ({
    name: `headers: ${name}`,
    revision: '2026',
    body: call(),
    headers,
    expect,
    rows,
  }));
}

/** Stray responses and notifications. */
function strays(revision: Revision): BadInputCase[] {
  // A client response has no method: on 2026 there is no session to answer into, so it is refused for lacking one.
  const response = (body: unknown): Pick<BadInputCase, 'body' | 'bare' | 'noRouting' | 'expect' | 'rows'> =>
    revision === '2025'
      ? { body, bare: true, noRouting: true, expect: accepted, rows: 1 }
      : { body, bare: true, noRouting: true, expect: rpc(400, -32000), rows: 0 };
  const cases: BadInputCase[] = [
    {
      name: 'strays: a result for an id never sent',
      revision,
      ...response({ jsonrpc: '2.0', id: 'never-sent', result: {} }),
    },
    {
      name: 'strays: an error for an id never sent',
      revision,
      ...response({ jsonrpc: '2.0', id: 987654, error: { code: -1, message: 'no' } }),
    },
    {
      name: 'strays: a result for a numeric id never sent',
      revision,
      ...response({ jsonrpc: '2.0', id: 0, result: { action: 'accept' } }),
    },
    {
      name: 'strays: a result whose id is an object',
      revision,
      body: { jsonrpc: '2.0', id: {}, result: {} },
      bare: true,
      noRouting: true,
      expect: rpc(400, -32600),
      rows: 0,
    },
    {
      name: 'strays: notifications/cancelled for an unknown request id',
      revision,
      body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'nobody', reason: 'x' } },
      expect: accepted,
      rows: 1,
    },
    {
      name: 'strays: notifications/cancelled with an object request id',
      revision,
      body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: { a: 1 } } },
      expect: accepted,
      rows: 1,
    },
    {
      name: 'strays: notifications/cancelled without params',
      revision,
      body: { jsonrpc: '2.0', method: 'notifications/cancelled' },
      expect: accepted,
      rows: 1,
    },
    {
      name: 'strays: notifications/initialized again',
      revision,
      body: { jsonrpc: '2.0', method: 'notifications/initialized' },
      expect: accepted,
      rows: 1,
    },
    {
      name: 'strays: notifications/progress from the client',
      revision,
      body: { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'x', progress: 1 } },
      expect: accepted,
      rows: 1,
    },
    {
      name: 'strays: an unknown notification',
      revision,
      body: { jsonrpc: '2.0', method: 'notifications/whatever' },
      expect: accepted,
      rows: 1,
    },
  ];
  return cases;
}

/** Bodies sent a few bytes at a time. */
function slowLoris(revision: Revision): BadInputCase[] {
  return [
    {
      name: 'slow loris: a body trickled a byte at a time past bodyTimeoutMs',
      revision,
      body: request('tools/call', { name: 'echo', arguments: { text: 'slow'.repeat(20) } }),
      trickle: { bytes: 1, pauseMs: 40 },
      expect: { status: 408, code: -32000 },
      rows: 0,
    },
    {
      name: 'slow loris: a body in three slow pieces within bodyTimeoutMs is served',
      revision,
      body: request('tools/list'),
      trickle: { bytes: 30, pauseMs: 50 },
      expect: ok,
      rows: 1,
    },
  ];
}

/** Odd `initialize` requests on the 2025 path (no session header: each opens a session when it succeeds). */
function initializes(): BadInputCase[] {
  const init = (params: unknown) => ({ jsonrpc: '2.0', id: id(), method: 'initialize', params });
  const noSession = { 'Mcp-Session-Id': null, 'MCP-Protocol-Version': null };
  return [
    {
      name: 'initialize: protocolVersion 9999-99-99 (the server answers with its own)',
      revision: '2025',
      body: init({ protocolVersion: '9999-99-99', capabilities: {}, clientInfo: { name: 'x', version: '1' } }),
      headers: noSession,
      expect: ok,
      rows: 1,
    },
    {
      name: 'initialize: clientInfo as a string',
      revision: '2025',
      body: init({ protocolVersion: '2025-11-25', capabilities: {}, clientInfo: 'me' }),
      headers: noSession,
      expect: ok,
      rows: 1,
    },
    {
      name: 'initialize: capabilities with __proto__',
      revision: '2025',
      body: `{"jsonrpc":"2.0","id":"init-proto","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"__proto__":{"sampling":{}}},"clientInfo":{"name":"x","version":"1"}}}`,
      headers: noSession,
      expect: ok,
      rows: 1,
    },
    {
      name: 'initialize: no params',
      revision: '2025',
      body: { jsonrpc: '2.0', id: id(), method: 'initialize' },
      headers: noSession,
      expect: ok,
      rows: 1,
    },
    {
      name: 'initialize: as a notification',
      revision: '2025',
      body: { jsonrpc: '2.0', method: 'initialize' },
      headers: noSession,
      expect: rpc(400, -32000),
      rows: 0,
    },
  ];
}

/** The whole corpus, in the order it is sent. */
export function badInputCorpus(): BadInputCase[] {
  return [
    ...REVISIONS.flatMap((revision) => [
      ...envelopes(revision),
      ...odd_ids(revision),
      ...protoNames(revision),
      ...wrongTypes(revision),
      ...oddStrings(revision),
      ...strays(revision),
      ...slowLoris(revision),
    ]),
    ...hostileHeaders(),
    ...statelessHeaders(),
    ...initializes(),
  ];
}
