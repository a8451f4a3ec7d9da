import express from 'express';
import type { Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { createMcpBodyReader, discardLimitOf, MCP_RAW_BODY, type McpRawBody, type McpRequest } from './mcp-body-reader';

const LIMIT = 1024;
/** Polls until `done()` holds; the deadline only bounds the wait. */
async function waitFor(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`Gave up waiting for ${what}`);
    await delay(20);
  }
}

const TIMEOUT_MS = 300;

/** What came back on a raw connection: the status line, the headers, the body, and whether the server closed it. */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function parseAnswer(text: string): RawAnswer | null {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  const body = text.slice(end + 4);
  if (Buffer.byteLength(body) < Number(headers['content-length'] ?? 0)) return null;
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}

describe('MCP body reader on a real express app', () => {
  let server: Server;
  let port: number;
  const seen: (McpRawBody | undefined)[] = [];
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    const app = express();
    // One limits object for the path, as the module keeps it: every body read under it shares its deadlines.
    const limits = { maxBytes: LIMIT, timeoutMs: TIMEOUT_MS };
    app.use(createMcpBodyReader((path) => (path === '/mcp' ? limits : null)));
    const answer = (req: McpRequest, res: express.Response) => {
      seen.push(req[MCP_RAW_BODY]);
      if (req[MCP_RAW_BODY]?.ok === false) return void res.destroy();
      res.json({ raw: req[MCP_RAW_BODY] ?? null });
    };
    app.post('/mcp', answer);
    app.post('/other', answer);
    app.get('/mcp', answer);
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    port = (server.address() as AddressInfo).port;
  });

  beforeEach(() => {
    seen.length = 0;
  });

  afterEach(() => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  });

  afterAll(async () => {
    await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  });

  /** Opens a raw connection; `answer` resolves with the first complete response, `closed` once the server closes. */
  function open(): { socket: Socket; answer: Promise<RawAnswer>; closed: Promise<void> } {
    const socket = connect(port, '127.0.0.1');
    sockets.add(socket);
    let text = '';
    const answer = new Promise<RawAnswer>((resolve, reject) => {
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
        const parsed = parseAnswer(text);
        if (parsed) resolve(parsed);
      });
      socket.on('close', () => reject(new Error(`closed before a full answer: ${JSON.stringify(text)}`)));
    });
    answer.catch(() => undefined);
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    return { socket, answer, closed };
  }

  const head = (path: string, extra: string) =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}\r\n`;

  it('keeps a body within the limit as text for the endpoint', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { note: 'ü'.repeat(10) } });
    const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ raw: { ok: true, text: body } });
  });

  describe('however the body is cut into packets', () => {
    const message = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping', params: { note: 'ü'.repeat(40) } });
    const bytes = Buffer.from(message);

    it('reads a request that comes in one packet, headers and body together', async () => {
      const { socket, answer } = open();
      socket.write(Buffer.concat([Buffer.from(head('/mcp', `Content-Length: ${bytes.length}\r\n`)), bytes]));
      const { status, body } = await answer;
      expect(status).toBe(200);
      expect(JSON.parse(body)).toEqual({ raw: { ok: true, text: message } });
    });

    it('reads a body that comes after its headers, in pieces split inside a character', async () => {
      const { socket, answer } = open();
      socket.write(head('/mcp', `Content-Length: ${bytes.length}\r\n`));
      await delay(30);
      const cut = bytes.indexOf(Buffer.from('ü')) + 1; // between the two bytes of a 'ü'
      socket.write(bytes.subarray(0, cut));
      await delay(30);
      socket.write(bytes.subarray(cut));
      const { status, body } = await answer;
      expect(status).toBe(200);
      expect(JSON.parse(body)).toEqual({ raw: { ok: true, text: message } });
    });

    it('reads two requests sent back to back on one connection in one packet', async () => {
      const socket = connect(port, '127.0.0.1');
      sockets.add(socket);
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('utf8')));
      const one = Buffer.concat([Buffer.from(head('/mcp', `Content-Length: ${bytes.length}\r\n`)), bytes]);
      socket.write(Buffer.concat([one, one]));
      await waitFor(() => text.split('HTTP/1.1 200').length === 3, 'both answers');
      expect(seen).toEqual([
        { ok: true, text: message },
        { ok: true, text: message },
      ]);
    });

    it('hands an empty body on as empty text', async () => {
      const { socket, answer } = open();
      socket.write(head('/mcp', 'Content-Length: 0\r\n'));
      const { status, body } = await answer;
      expect(status).toBe(200);
      expect(JSON.parse(body)).toEqual({ raw: { ok: true, text: '' } });
    });

    it('answers 413 to a body over the limit that came whole with its headers, and keeps the connection', async () => {
      const { socket, answer } = open();
      const big = Buffer.alloc(LIMIT + 1, 'z');
      socket.write(Buffer.concat([Buffer.from(head('/mcp', `Content-Length: ${big.length}\r\n`)), big]));
      const { status, headers } = await answer;
      expect(status).toBe(413);
      expect(headers.connection).not.toBe('close');
      expect(seen).toEqual([]);
    });
  });

  it('leaves other paths and other methods to the app', async () => {
    expect(await (await fetch(`http://127.0.0.1:${port}/other`, { method: 'POST', body: '{}' })).json()).toEqual({
      raw: null,
    });
    expect(await (await fetch(`http://127.0.0.1:${port}/mcp`)).json()).toEqual({ raw: null });
  });

  it('refuses a body whose Content-Length is past the discard limit at once, and closes the connection', async () => {
    const { socket, answer, closed } = open();
    socket.write(head('/mcp', `Content-Length: ${discardLimitOf(LIMIT) + 1}\r\n`));
    const { status, headers, body } = await answer;
    expect(status).toBe(413);
    expect(headers.connection).toBe('close');
    expect(JSON.parse(body)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: `Payload Too Large: the body exceeds ${LIMIT} bytes` },
    });
    await closed;
    expect(seen).toEqual([]);
  });

  it('reads and discards a body over the limit but within the discard limit, then answers 413', async () => {
    const size = LIMIT + 100;
    const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(size),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      `Payload Too Large: the body exceeds ${LIMIT} bytes`,
    );
    expect(seen).toEqual([]);
  });

  it('cuts off a chunked body that goes past the discard limit with 413, and ignores the client leaving afterwards', async () => {
    const { socket, answer } = open();
    socket.write(head('/mcp', 'Transfer-Encoding: chunked\r\n'));
    const chunk = 'y'.repeat(discardLimitOf(LIMIT) + 1);
    socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    const { status, headers } = await answer;
    expect(status).toBe(413);
    expect(headers.connection).toBe('close');
    socket.destroy();
    expect(seen).toEqual([]);
  });

  it('answers 408 and closes when the body does not arrive within the deadline', async () => {
    const { socket, answer, closed } = open();
    socket.write(head('/mcp', 'Content-Length: 100\r\n'));
    socket.write('{"jsonrpc":');
    const { status, headers, body } = await answer;
    expect(status).toBe(408);
    expect(headers.connection).toBe('close');
    expect(JSON.parse(body).error.message).toBe(`Request Timeout: the body did not arrive within ${TIMEOUT_MS} ms`);
    await closed;
    expect(seen).toEqual([]);
  });

  it('times out each stalled body at its own deadline, while bodies that arrive in between are read', async () => {
    const first = open();
    first.socket.write(head('/mcp', 'Content-Length: 100\r\n'));
    first.socket.write('{"jsonrpc":');
    await delay(TIMEOUT_MS / 2);
    const second = open();
    const secondStarted = performance.now();
    second.socket.write(head('/mcp', 'Content-Length: 100\r\n'));
    second.socket.write('{"jsonrpc":');
    const secondAnswered = second.answer.then(() => performance.now() - secondStarted);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });
    const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(await response.json()).toEqual({ raw: { ok: true, text: body } });
    const order: string[] = [];
    const answers = [first, second].map((connection, i) =>
      connection.answer.then((answer) => {
        order.push(i === 0 ? 'first' : 'second');
        return answer.status;
      }),
    );
    expect(await Promise.all(answers)).toEqual([408, 408]);
    expect(order).toEqual(['first', 'second']);
    // The second body was answered at its own deadline, not at the first one's (a lower bound:
    // a slow machine can only make it later; 20 ms of slack for the two clocks' rounding).
    expect(await secondAnswered).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    await Promise.all([first.closed, second.closed]);
    expect(seen).toEqual([{ ok: true, text: body }]);
  });

  it('hands the endpoint an aborted body when the client leaves mid-body', async () => {
    const { socket } = open();
    socket.write(head('/mcp', 'Content-Length: 100\r\n'));
    socket.write('{"jsonrpc":', () => socket.destroy());
    await waitFor(() => seen.length === 1, 'the endpoint to see the aborted body');
    expect(seen).toEqual([{ ok: false, reason: 'aborted' }]);
  });
});
