import { SseEventTooLargeError, SseParser, type SseEvent } from './sse';

function parseAll(chunks: string[]): { events: SseEvent[]; parser: SseParser } {
  const parser = new SseParser();
  const events = chunks.flatMap((chunk) => parser.push(chunk));
  return { events, parser };
}

describe('SseParser', () => {
  it('dispatches one event per blank line with its type, data and id', () => {
    const { events, parser } = parseAll(['event: message\nid: 7\ndata: {"a":1}\n\n']);
    expect(events).toEqual([{ type: 'message', data: '{"a":1}', lastEventId: '7' }]);
    expect(parser.lastEventId).toBe('7');
  });

  it('joins several data lines with LF and defaults the type to message', () => {
    const { events } = parseAll(['data: one\ndata:two\ndata\n\n']);
    expect(events).toEqual([{ type: 'message', data: 'one\ntwo\n', lastEventId: '' }]);
  });

  it('accepts CRLF, CR and LF line ends, also when CRLF is split across chunks', () => {
    const { events } = parseAll(['data: a\r', '\n\r', '\ndata: b\r\rdata: c\n', '\n']);
    expect(events.map((e) => e.data)).toEqual(['a', 'b', 'c']);
  });

  it('reassembles fields split anywhere across chunks', () => {
    const text = 'id: 42\nevent: custom\ndata: {"jsonrpc":"2.0"}\n\n';
    const { events } = parseAll(text.split(''));
    expect(events).toEqual([{ type: 'custom', data: '{"jsonrpc":"2.0"}', lastEventId: '42' }]);
  });

  it('skips comments and unknown fields, and strips a leading byte order mark', () => {
    const { events } = parseAll(['\ufeff: keep-alive\nfoo: bar\ndata: x\n\n']);
    expect(events).toEqual([{ type: 'message', data: 'x', lastEventId: '' }]);
  });

  it('dispatches a priming event whose data is empty, and updates the id without data', () => {
    const { events, parser } = parseAll(['id: p1\ndata: \n\n', 'id: p2\n\n']);
    expect(events).toEqual([{ type: 'message', data: '', lastEventId: 'p1' }]);
    expect(parser.lastEventId).toBe('p2');
  });

  it('keeps retry only when it is all ASCII digits, and ignores ids holding NUL', () => {
    const { parser } = parseAll(['retry: 1500\nretry: 2s\nid: ok\nid: bad\0id\n\n']);
    expect(parser.retryMs).toBe(1500);
    expect(parser.lastEventId).toBe('ok');
  });

  it('discards an event that the stream leaves unfinished', () => {
    const { events } = parseAll(['data: complete\n\n', 'data: cut off\n']);
    expect(events.map((e) => e.data)).toEqual(['complete']);
  });

  it('reassembles a line split into many chunks, CRLF split across chunks included', () => {
    const data = 'z'.repeat(200_000);
    const text = `data: ${data}\r\n\r\n`;
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += 7) chunks.push(text.slice(i, i + 7));
    const { events } = parseAll(chunks);
    expect(events).toEqual([{ type: 'message', data, lastEventId: '' }]);
  });

  it('strips a byte order mark only at the very start of the stream, also after an empty chunk', () => {
    expect(parseAll(['\ufeffdata: x\n\n']).events).toEqual([{ type: 'message', data: 'x', lastEventId: '' }]);
    expect(parseAll(['', '\ufeffdata: x\n\n']).events).toEqual([{ type: 'message', data: 'x', lastEventId: '' }]);
    expect(parseAll(['data: a', '\ufeffb\n\n']).events).toEqual([
      { type: 'message', data: 'a\ufeffb', lastEventId: '' },
    ]);
  });

  it('dispatches nothing for blank lines before any data', () => {
    const parser = new SseParser();
    expect(parser.push('\n')).toEqual([]);
    expect(parser.push('\r\n\n')).toEqual([]);
    expect(parser.push('event: ping\n\n')).toEqual([]);
  });

  it('treats an LF after a chunk-final CR as the end of that CR line, even across an empty chunk', () => {
    expect(parseAll(['data: a\r', '\ndata: b\n\n']).events).toEqual([
      { type: 'message', data: 'a\nb', lastEventId: '' },
    ]);
    expect(parseAll(['data: a\r', '', '\ndata: b\n\n']).events).toEqual([
      { type: 'message', data: 'a\nb', lastEventId: '' },
    ]);
  });

  it('keeps the first character of the next chunk when a chunk-final CR is not followed by LF', () => {
    expect(parseAll(['data: a\r', 'data: b\n\n']).events).toEqual([{ type: 'message', data: 'a\nb', lastEventId: '' }]);
    expect(parseAll(['data: a\r\n', '\ndata: b\n\n']).events.map((e) => e.data)).toEqual(['a', 'b']);
  });

  it('carries only the unfinished tail of a chunk over to the next one', () => {
    expect(parseAll(['data: a\nda', 'ta: b\n\n']).events).toEqual([{ type: 'message', data: 'a\nb', lastEventId: '' }]);
  });

  it('keeps a data line whose value is empty after the colon', () => {
    expect(parseAll(['data:\n\n']).events).toEqual([{ type: 'message', data: '', lastEventId: '' }]);
    expect(parseAll(['data: x:\n\n']).events).toEqual([{ type: 'message', data: 'x:', lastEventId: '' }]);
  });

  it('ignores a retry value that has anything but digits, wherever it is', () => {
    expect(parseAll(['retry: a15\n']).parser.retryMs).toBeNull();
    expect(parseAll(['retry: 15a\n']).parser.retryMs).toBeNull();
    expect(parseAll(['retry: 0\n']).parser.retryMs).toBe(0);
  });

  it('resets the event type after each dispatch', () => {
    const { events } = parseAll(['event: custom\ndata: 1\n\ndata: 2\n\n']);
    expect(events).toEqual([
      { type: 'custom', data: '1', lastEventId: '' },
      { type: 'message', data: '2', lastEventId: '' },
    ]);
  });

  describe('maxEventChars', () => {
    it('throws SseEventTooLargeError once a line without an end passes the limit', () => {
      const parser = new SseParser({ maxEventChars: 1000 });
      expect(parser.push('data: ' + 'x'.repeat(900))).toEqual([]);
      expect(() => parser.push('x'.repeat(200))).toThrow(SseEventTooLargeError);
    });

    it('counts the data lines of one event together, and starts over after each event', () => {
      const parser = new SseParser({ maxEventChars: 100 });
      const line = `data: ${'y'.repeat(40)}\n`;
      expect(parser.push(line + line + '\n').map((e) => e.data.length)).toEqual([81]);
      expect(parser.push(line + line + '\n').map((e) => e.data.length)).toEqual([81]);
      expect(() => parser.push(line + line + line)).toThrow(new SseEventTooLargeError(100));
    });

    it('names its limit in the error', () => {
      const error = new SseEventTooLargeError(12);
      expect(error.message).toBe('an event grew past 12 characters');
      expect(error.name).toBe('SseEventTooLargeError');
      expect(error.maxEventChars).toBe(12);
    });

    it('accepts a line of exactly the limit, and throws one character past it', () => {
      expect(new SseParser({ maxEventChars: 10 }).push('data: abcd')).toEqual([]);
      expect(new SseParser({ maxEventChars: 10 }).push('data: abcd\n\n')).toEqual([
        { type: 'message', data: 'abcd', lastEventId: '' },
      ]);
      expect(() => new SseParser({ maxEventChars: 10 }).push('data: abcde')).toThrow(new SseEventTooLargeError(10));
    });

    it('counts each data line as its value plus one LF', () => {
      // After 'data: 12345' the event holds 6 characters; a next line of 14 fits in 20, one of 15 does not.
      expect(new SseParser({ maxEventChars: 20 }).push('data: 12345\ndata: 12345678\n\n')).toEqual([
        { type: 'message', data: '12345\n12345678', lastEventId: '' },
      ]);
      expect(() => new SseParser({ maxEventChars: 20 }).push('data: 12345\ndata: 123456789\n\n')).toThrow(
        new SseEventTooLargeError(20),
      );
    });

    it('lets comments and other lines of any number through, each within the limit', () => {
      const parser = new SseParser({ maxEventChars: 50 });
      for (let i = 0; i < 1000; i++) parser.push(`: keep-alive ${i}\nid: ${i}\n`);
      expect(parser.push('data: ok\n\n')).toEqual([{ type: 'message', data: 'ok', lastEventId: '999' }]);
    });
  });
});
