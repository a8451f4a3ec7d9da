import type { Response } from 'express';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { DEFAULT_STREAM_OPTIONS } from '../http/mcp-stream.options';
import { acceptsEventStream, McpSseWriter, parseEventId } from './mcp-sse-writer';

describe('acceptsEventStream', () => {
  it.each([
    ['text/event-stream', true],
    ['application/json, text/event-stream', true],
    ['application/json, TEXT/Event-Stream;q=0.5', true],
    ['application/json', false],
    ['*/*', false],
    ['text/*', false],
    ['', false],
    [undefined, false],
  ])('%j -> %s', (accept, expected) => {
    expect(acceptsEventStream(accept)).toBe(expected);
  });
});

describe('parseEventId', () => {
  it('splits a stream id and a sequence number at the last underscore', () => {
    expect(parseEventId('session_12')).toEqual({ streamId: 'session', seq: 12 });
    expect(parseEventId('a_b-C_0')).toEqual({ streamId: 'a_b-C', seq: 0 });
  });

  it.each([
    undefined,
    '',
    'session',
    'session_',
    '_3',
    'session_-1',
    'session_1.5',
    'sess ion_1',
    `${'s'.repeat(65)}_1`,
    `s_${'9'.repeat(16)}`,
  ])('refuses %j', (id) => {
    expect(parseEventId(id)).toBeNull();
  });
});

describe('McpSseWriter on a real HTTP response', () => {
  let server: Server;
  let port: number;
  let handle: (res: Response) => void;

  beforeAll(async () => {
    server = createServer((_req, res: ServerResponse) => handle(res as unknown as Response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Runs `write` as the server's answer and returns what the client received. */
  async function received(write: (res: Response) => void): Promise<{ headers: Headers; text: string }> {
    handle = write;
    const response = await fetch(`http://127.0.0.1:${port}/`);
    return { headers: response.headers, text: await response.text() };
  }

  it('sends the head, a priming event with the retry delay, numbered events and comments, with a fresh URL-safe stream id', async () => {
    let streamId = '';
    const { headers, text } = await received((res) => {
      const writer = new McpSseWriter(res);
      streamId = writer.streamId;
      writer.open(1500, { 'Mcp-Session-Id': 's1' });
      expect(writer.send('{"a":1}')).toBe(`${streamId}_1`);
      writer.comment('keep-alive');
      expect(writer.sendAt(7, '{"b":2}')).toBe(`${streamId}_7`);
      writer.end();
      writer.end();
    });
    expect(streamId).toMatch(/^[A-Za-z0-9_-]{12}$/);
    expect(headers.get('content-type')).toBe('text/event-stream');
    expect(headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(headers.get('x-accel-buffering')).toBe('no');
    expect(headers.get('mcp-session-id')).toBe('s1');
    expect(text).toBe(
      `id: ${streamId}_0\nretry: 1500\ndata: \n\nid: ${streamId}_1\ndata: {"a":1}\n\n: keep-alive\n\nid: ${streamId}_7\ndata: {"b":2}\n\n`,
    );
  });

  it('numbers on from a given priming sequence and records every sent event, the final one marked', async () => {
    const recorded: [number, string, boolean][] = [];
    const { text } = await received((res) => {
      const writer = new McpSseWriter(res, {
        streamId: 'req',
        record: (seq, json, final) => recorded.push([seq, json, final]),
      });
      writer.open(10, undefined, 4);
      writer.send('{"n":1}');
      writer.send('{"r":1}', true);
      writer.end();
    });
    expect(text).toBe('id: req_4\nretry: 10\ndata: \n\nid: req_5\ndata: {"n":1}\n\nid: req_6\ndata: {"r":1}\n\n');
    expect(recorded).toEqual([
      [5, '{"n":1}', false],
      [6, '{"r":1}', true],
    ]);
  });

  it('once ended, sends nothing more but still records events for a client that may resume', async () => {
    const recorded: number[] = [];
    const results: (string | null)[] = [];
    const { text } = await received((res) => {
      const unrecorded = new McpSseWriter(res, { streamId: 'x' });
      const recording = new McpSseWriter(res, { streamId: 'x', record: (seq) => recorded.push(seq) });
      unrecorded.open(10);
      res.end();
      expect(unrecorded.closed).toBe(true);
      results.push(unrecorded.send('{}'), recording.send('{"late":1}', true), unrecorded.sendAt(3, '{}'));
      unrecorded.comment('ignored');
      unrecorded.end();
    });
    expect(text).toBe('id: x_0\nretry: 10\ndata: \n\n');
    expect(results).toEqual([null, null, null]);
    expect(recorded).toEqual([0]);
  });

  it.each(['send', 'sendAt'] as const)(
    'destroys the stream instead of queueing without bound when the client stops reading (%s)',
    async (method) => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      let outcome: { sent: number; refusedAt: string | null; closed: boolean; recorded: number } | undefined;
      handle = (res) => {
        let recorded = 0;
        const writer = new McpSseWriter(res, {
          streamId: 'slow',
          maxBufferedBytes: 64 * 1024,
          record: () => recorded++,
        });
        writer.open(10);
        const chunk = JSON.stringify({ pad: 'p'.repeat(64 * 1024) });
        let sent = 0;
        const pump = () => {
          for (let i = 0; i < 64; i++) {
            const id = method === 'send' ? writer.send(chunk) : writer.sendAt(sent + 1, chunk);
            if (id === null) {
              outcome = { sent, refusedAt: method, closed: writer.closed, recorded };
              return;
            }
            sent++;
          }
          if (sent > 100_000) return void (outcome = { sent, refusedAt: null, closed: writer.closed, recorded });
          setImmediate(pump);
        };
        pump();
      };
      socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      socket.pause();
      const deadline = Date.now() + 20_000;
      while (!outcome && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      socket.destroy();
      expect(outcome).toMatchObject({ refusedAt: method, closed: true });
      // `send` records each event before writing it, the refused one included; `sendAt` events come from the log.
      expect(outcome!.recorded).toBe(method === 'send' ? outcome!.sent + 1 : 0);
    },
  );
});

describe('McpSseWriter with the default buffer bound', () => {
  /** A response whose queued byte count the test sets. */
  function response(writableLength: number) {
    const res = {
      writableLength,
      writableEnded: false,
      destroyed: false,
      writeHead: jest.fn(),
      flushHeaders: jest.fn(),
      write: jest.fn(),
      destroy: jest.fn(() => void (res.destroyed = true)),
    };
    return res;
  }

  // The documented 4 MiB, as the number: exactly that much waiting is still written to, one byte more closes the stream.
  it.each<[number, boolean]>([
    [4_194_304, true],
    [4_194_305, false],
  ])('with %i bytes waiting, writes the next event: %s', (waiting, written) => {
    const res = response(0);
    const writer = new McpSseWriter(res as unknown as ServerResponse, {
      streamId: 's',
      maxBufferedBytes: DEFAULT_STREAM_OPTIONS.maxBufferedBytes,
    });
    writer.open(10);
    res.writableLength = waiting;
    expect(writer.send('{}')).toBe(written ? 's_1' : null);
    expect(res.write).toHaveBeenCalledTimes(written ? 2 : 1);
    expect(res.destroy).toHaveBeenCalledTimes(written ? 0 : 1);
    expect(writer.closed).toBe(!written);
  });
});
