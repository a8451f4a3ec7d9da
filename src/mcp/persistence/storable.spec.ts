import { JsonText } from './json-text';
import { MCP_COLUMN_LENGTHS } from './mcp-columns.constants';
import { newEventRecord, newInboundSessionRecord, storedPrincipalKey } from './new-records';
import { MAX_STORED_JSON_DEPTH, StorableNotes, storableJson, storableKey, storableString } from './storable';

const deepArray = (depth: number): unknown => {
  let value: unknown = [];
  for (let i = 1; i < depth; i++) value = [value];
  return value;
};
const event = (fields: Record<string, unknown>) =>
  newEventRecord({ direction: 'inbound', kind: 'request', createdAt: new Date(0), durationMs: 1, ...fields });

describe('storable values', () => {
  it('cuts a varchar value to its column and says so on the notes, without splitting a surrogate pair', () => {
    const notes = new StorableNotes();
    expect(storableString('x'.repeat(300), 255, 'method', notes)).toBe('x'.repeat(255));
    expect(storableString(`${'x'.repeat(254)}😀`, 255, 'method', notes)).toBe('x'.repeat(254));
    expect(notes.text()).toBe(
      'stored with changes: method cut from 300 to 255 characters; method cut from 256 to 255 characters',
    );
  });

  it('escapes NUL and lone surrogates in text but keeps emoji and right-to-left marks', () => {
    const notes = new StorableNotes();
    expect(storableString('a\u0000b\ud800c\udc00d', 255, 'method', notes)).toBe('a\\u0000b\\ud800c\\udc00d');
    expect(storableString('😀\u200f', 255, 'label', notes)).toBe('😀\u200f');
    expect(notes.text()).toBe('stored with changes: NUL characters or lone surrogates escaped in method');
  });

  it('keeps a fitting key, and maps a long or unsafe key to a unique cut with a digest', () => {
    expect(storableKey('alice', 255)).toBe('alice');
    const a = storableKey(`${'k'.repeat(300)}a`, 255);
    const b = storableKey(`${'k'.repeat(300)}b`, 255);
    expect(a).toHaveLength(255);
    expect(a).not.toBe(b);
    expect(storableKey('a\u0000', 255)).not.toBe(storableKey('a\\u0000', 255));
    expect(storableKey('x\ud800', 255)).not.toBe(storableKey('x\udc00', 255));
  });

  it('escapes strings and keys of a jsonb value, and stores nesting past the limit as JSON text without recursion', () => {
    const notes = new StorableNotes();
    expect(storableJson({ 'k\u0000': ['v\ud800', { ok: '😀' }] }, 'client info', notes)).toEqual({
      'k\\u0000': ['v\\ud800', { ok: '😀' }],
    });
    const deep = storableJson({ a: deepArray(200_000) }, 'response', notes);
    expect(typeof deep).toBe('string');
    expect(deep).toBe(`{"a":${'['.repeat(200_000)}${']'.repeat(200_000)}}`);
    expect(storableJson(deepArray(512), 'request', new StorableNotes())).toEqual(deepArray(512));
    expect(notes.text()).toBe(
      'stored with changes: NUL characters or lone surrogates escaped in client info; response nested deeper than 512 levels, stored as its JSON text',
    );
  });

  it('rewrites JSON text so no string decodes to NUL or a lone surrogate, keeping pairs and literal backslashes', () => {
    const notes = new StorableNotes();
    const text = String.raw`{"a":"x\u0000y","b":"\ud800","c":"\ud83d\ude00","d":"\\u0000","e":"\udc00z"}`;
    const stored = storableJson(new JsonText(text), 'request', notes) as JsonText;
    expect(JSON.parse(stored.text)).toEqual({ a: 'x\\u0000y', b: '\\ud800', c: '😀', d: '\\u0000', e: '\\udc00z' });
    expect(notes.text()).toBe('stored with changes: NUL characters or lone surrogates escaped in request');
    const clean = new JsonText(String.raw`{"d":"\\u0000","e":"😀"}`);
    expect(storableJson(clean, 'request', new StorableNotes())).toBe(clean);
  });

  it('builds event rows with every client value storable and the changes on the note, after the caller note', () => {
    const row = event({
      method: `m${'x'.repeat(299)}`,
      principalKey: 'p'.repeat(300),
      request: new JsonText('{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"k":"\\u0000"}}}'),
      note: 'Internal error: boom\u0000',
    });
    expect(row.method).toHaveLength(MCP_COLUMN_LENGTHS.method);
    expect(row.principalKey).toBe(storedPrincipalKey('p'.repeat(300)));
    expect(JSON.parse((row.request as JsonText).text).params._meta.k).toBe('\\u0000');
    expect(row.note).toBe(
      'Internal error: boom\\u0000\nstored with changes: method cut from 300 to 255 characters; NUL characters or lone surrogates escaped in request; NUL characters or lone surrogates escaped in note',
    );
    expect(event({ method: 'ping' }).note).toBeNull();
  });

  it('builds session rows whose principal is found again by its stored key', () => {
    const record = newInboundSessionRecord('default', {
      principal: { key: 'k'.repeat(400), label: 'l\u0000'.repeat(200), raw: null },
      protocolVersion: '2025-11-25',
      clientInfo: { name: 'c\ud800' },
      clientCapabilities: {},
    });
    expect(record.principalKey).toBe(storedPrincipalKey('k'.repeat(400)));
    expect(record.principalLabel).toHaveLength(MCP_COLUMN_LENGTHS.principalLabel);
    expect(record.clientInfo).toEqual({ name: 'c\\ud800' });
  });
});

describe('storable jsonb values: scalars, JSON text and values past the depth limit', () => {
  it('stores null for null and undefined, keeps numbers and booleans, and escapes a bare string', () => {
    const notes = new StorableNotes();
    expect(storableJson(null, 'result', notes)).toBeNull();
    expect(storableJson(undefined, 'result', notes)).toBeNull();
    expect(storableJson(42, 'result', notes)).toBe(42);
    expect(storableJson(false, 'result', notes)).toBe(false);
    expect(notes.text()).toBeNull();
    expect(storableJson('a\u0000', 'result', notes)).toBe('a\\u0000');
    expect(storableJson(['b\u0000'], 'result', notes)).toEqual(['b\\u0000']);
    expect(notes.text()).toBe('stored with changes: NUL characters or lone surrogates escaped in result');
  });

  it('escapes a value as JSON.stringify would see it: toJSON applied, numbers and nulls kept', () => {
    const notes = new StorableNotes();
    const stamp = { toJSON: () => 'stamp\u0000' };
    expect(storableJson({ at: stamp, n: 1, z: null, list: [true, 'x\udc00'] }, 'params', notes)).toEqual({
      at: 'stamp\\u0000',
      n: 1,
      z: null,
      list: [true, 'x\\udc00'],
    });
    expect(notes.text()).toBe('stored with changes: NUL characters or lone surrogates escaped in params');
  });

  it('stores a JsonText nested past the limit as its text, with NUL and lone surrogates escaped', () => {
    const notes = new StorableNotes();
    const depth = 513;
    const text = `${'['.repeat(depth)}"\u0000"${']'.repeat(depth)}`;
    expect(storableJson(new JsonText(text), 'response', notes)).toBe(
      `${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)}`,
    );
    expect(notes.text()).toBe('stored with changes: response nested deeper than 512 levels, stored as its JSON text');
  });

  it('keeps a JsonText whose only suspicious escapes are surrogate pairs or ordinary characters, without a note', () => {
    const notes = new StorableNotes();
    const pairs = new JsonText(String.raw`{"e":"\ud83d\ude00","a":"\u0041\n\"q\"","raw":"😀"}`);
    expect(storableJson(pairs, 'request', notes)).toBe(pairs);
    const plain = new JsonText('{"jsonrpc":"2.0","id":1,"method":"ping"}');
    expect(storableJson(plain, 'request', notes)).toBe(plain);
    expect(notes.text()).toBeNull();
  });

  it('writes raw lone surrogates in JsonText strings as visible escapes, leaving text outside strings alone', () => {
    const notes = new StorableNotes();
    const stored = storableJson(
      new JsonText(`{"hi":"a\ud800b","lo":"\udc00","ok":"\u0041"}`),
      'request',
      notes,
    ) as JsonText;
    expect(stored).toBeInstanceOf(JsonText);
    expect(JSON.parse(stored.text)).toEqual({ hi: 'a\\ud800b', lo: '\\udc00', ok: 'A' });
    expect(notes.text()).toBe('stored with changes: NUL characters or lone surrogates escaped in request');
  });

  it('writes a value past the limit as JSON.stringify would, marking an object met again as [Circular]', () => {
    const notes = new StorableNotes();
    const deep = deepArray(513);
    const root: Record<string, unknown> = {
      deep,
      n: null,
      big: 10n,
      list: [undefined, () => 1, Symbol('s'), 1.5],
      skippedUndefined: undefined,
      skippedFunction: () => 1,
      skippedSymbol: Symbol('t'),
      at: new Date(0),
      text: 'x\u0000',
    };
    root.self = root;
    const expectedDeep = `${'['.repeat(513)}${']'.repeat(513)}`;
    expect(storableJson(root, 'result', notes)).toBe(
      `{"deep":${expectedDeep},"n":null,"big":"10","list":[null,null,null,1.5],"at":"1970-01-01T00:00:00.000Z","text":"x\\u0000","self":"[Circular]"}`,
    );
    expect(notes.text()).toBe('stored with changes: result nested deeper than 512 levels, stored as its JSON text');
  });

  // The documented limit is the number itself: a change of the constant must fail here.
  it('is the documented 512 levels: a value 512 deep is stored as it is, one 513 deep as its JSON text', () => {
    expect(MAX_STORED_JSON_DEPTH).toBe(512);
    const kept = new StorableNotes();
    expect(storableJson({ a: deepArray(511) }, 'result', kept)).toEqual({ a: deepArray(511) });
    expect(storableJson(new JsonText(`${'['.repeat(512)}${']'.repeat(512)}`), 'result', kept)).toBeInstanceOf(JsonText);
    expect(kept.text()).toBeNull();
    const over = new StorableNotes();
    expect(storableJson({ a: deepArray(512) }, 'result', over)).toBe(`{"a":${'['.repeat(512)}${']'.repeat(512)}}`);
    expect(over.text()).toBe('stored with changes: result nested deeper than 512 levels, stored as its JSON text');
    const overText = new StorableNotes();
    expect(storableJson(new JsonText(`${'['.repeat(513)}${']'.repeat(513)}`), 'result', overText)).toBe(
      `${'['.repeat(513)}${']'.repeat(513)}`,
    );
    expect(overText.text()).toBe('stored with changes: result nested deeper than 512 levels, stored as its JSON text');
  });
});
