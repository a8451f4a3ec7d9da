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

    it('lets comments and other lines of any number through, each within the limit', () => {
      const parser = new SseParser({ maxEventChars: 50 });
      for (let i = 0; i < 1000; i++) parser.push(`: keep-alive ${i}\nid: ${i}\n`);
      expect(parser.push('data: ok\n\n')).toEqual([{ type: 'message', data: 'ok', lastEventId: '999' }]);
    });
  });
});
