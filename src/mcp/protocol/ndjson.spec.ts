import { encodeNdjson, NdjsonDecoder, parseNdjsonLine, type NdjsonLine } from './ndjson';

function decoder(maxLineChars?: number) {
  const lines: NdjsonLine[] = [];
  const overflows: number[] = [];
  const instance = new NdjsonDecoder(
    { line: (line) => lines.push(line), overflow: (chars) => overflows.push(chars) },
    maxLineChars,
  );
  return { instance, lines, overflows };
}

describe('NDJSON framing', () => {
  it('encodes one message per line, escaping newlines inside strings', () => {
    const line = encodeNdjson({ jsonrpc: '2.0', method: 'x', params: { text: 'a\nb' } });
    expect(line).toBe('{"jsonrpc":"2.0","method":"x","params":{"text":"a\\nb"}}\n');
    expect(line.indexOf('\n')).toBe(line.length - 1);
  });

  it('joins a message split over chunks and cuts several messages out of one chunk', () => {
    const { instance, lines } = decoder();
    instance.push('{"a":');
    instance.push('1}\n{"b":2}\n{"c"');
    expect(lines.map((l) => l.kind === 'object' && l.value)).toEqual([{ a: 1 }, { b: 2 }]);
    instance.push(':3}\r\n');
    expect(lines[2]).toEqual({ kind: 'object', value: { c: 3 }, raw: '{"c":3}' });
  });

  it('reports lines that are not JSON objects as invalid, and skips blank lines', () => {
    const { instance, lines } = decoder();
    instance.push('42\n[1]\n"x"\nnot json\nnull\n\n   \n{"ok":true}\n');
    expect(lines.map((l) => l.kind)).toEqual(['invalid', 'invalid', 'invalid', 'invalid', 'invalid', 'object']);
    expect(parseNdjsonLine('[1]')).toEqual({ kind: 'invalid', raw: '[1]', reason: 'not a JSON object' });
    expect(parseNdjsonLine('nope')).toEqual({ kind: 'invalid', raw: 'nope', reason: 'not JSON' });
  });

  it('emits a last line without a newline at the end of the stream', () => {
    const { instance, lines } = decoder();
    instance.push('{"tail":1}');
    expect(lines).toEqual([]);
    instance.end();
    expect(lines).toHaveLength(1);
  });

  it('discards a line longer than the limit once, then resumes at the next newline', () => {
    const { instance, lines, overflows } = decoder(16);
    instance.push('{"long":"' + 'x'.repeat(10));
    instance.push('x'.repeat(100));
    instance.push('x"}\n{"next":1}\n');
    expect(overflows).toHaveLength(1);
    expect(lines).toEqual([{ kind: 'object', value: { next: 1 }, raw: '{"next":1}' }]);
  });

  it('accepts a line of exactly the limit and reports the whole length of one past it', () => {
    const { instance, lines, overflows } = decoder(10);
    instance.push('{"a":"12"}\n');
    expect(lines).toEqual([{ kind: 'object', value: { a: '12' }, raw: '{"a":"12"}' }]);
    instance.push('{"a":"123"}\n');
    expect(overflows).toEqual([11]);
    expect(lines).toHaveLength(1);
  });

  it('adds up the pieces of a line across chunks against the limit, reporting their total', () => {
    const { instance, lines, overflows } = decoder(10);
    instance.push('{"a":');
    instance.push('"12');
    expect(overflows).toEqual([]);
    instance.push('345"}\n');
    expect(overflows).toEqual([13]);
    instance.push('{"b":');
    instance.push('1}\n');
    expect(lines).toEqual([{ kind: 'object', value: { b: 1 }, raw: '{"b":1}' }]);
  });

  it('reports a single chunk past the limit at once', () => {
    const { instance, overflows } = decoder(4);
    instance.push('{"long":1}');
    expect(overflows).toEqual([10]);
  });

  it('accepts lines far longer than 64 KiB by default', () => {
    const { instance, lines, overflows } = decoder();
    const text = 'x'.repeat(100_000);
    instance.push(`{"text":"${text}"}\n`);
    expect(overflows).toEqual([]);
    expect(lines).toEqual([{ kind: 'object', value: { text }, raw: `{"text":"${text}"}` }]);
  });
});
