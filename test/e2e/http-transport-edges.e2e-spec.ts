import { freeLoopbackPort as freePort } from '../support/child-process';
import type { ServerResponse } from 'node:http';
import { McpProtocolError, McpRpcError, McpTransportError } from '../../src/mcp/errors';
import type { JsonRpcNotification, JsonRpcRequest } from '../../src/mcp/protocol';
import { HttpTransport } from '../../src/mcp/client/transports/http/http.transport';
import type {
  McpTransportContext,
  McpTransportDeliverOptions,
} from '../../src/mcp/client/transports/mcp-transport.interface';
import {
  json,
  openSse,
  result,
  sseEvent,
  startScriptedHttpServer,
  status,
  type ScriptedHttpServer,
  type ScriptedReply,
} from '../fixtures/http/scripted-http-server';

const context = (extra: Partial<McpTransportContext> = {}): McpTransportContext => ({
  server: 'edge',
  scopeKey: '',
  timeoutMs: 10_000,
  ...extra,
});
const inSession = (extra: Partial<McpTransportContext> = {}): McpTransportDeliverOptions => ({
  sessionId: 'session-1',
  protocolVersion: '2025-11-25',
  context: context(extra),
});
const fresh = (extra: Partial<McpTransportContext> = {}): McpTransportDeliverOptions => ({
  sessionId: null,
  context: context(extra),
});
let nextId = 1;
const request = (method: string, params?: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: nextId++,
  method,
  ...(params ? { params } : {}),
});
const initialize = (): JsonRpcRequest =>
  request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } });
/** Answers the initialize request of the client's own handshake, whatever its id. */
const handshake =
  (extra: Record<string, unknown> = {}): ScriptedReply =>
  (res, body) =>
    void res.writeHead(200, { 'Content-Type': 'application/json', 'Mcp-Session-Id': 'new-session' }).end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: body?.id,
        result: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          serverInfo: { name: 'edge', version: '1' },
          ...extra,
        },
      }),
    );
const accepted: ScriptedReply = (res) => void res.writeHead(202).end();

async function failureOf(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: Error) => error,
  );
}

describe('HttpTransport edges against a scripted HTTP server', () => {
  let server: ScriptedHttpServer;
  let transport: HttpTransport;

  beforeEach(async () => {
    server = await startScriptedHttpServer();
    transport = new HttpTransport({ url: server.url, retry: { retries: 0 } });
  });
  afterEach(() => server.close());

  describe('closeSession', () => {
    it.each([200, 204, 404, 405])(
      'takes HTTP %i as the session being gone, sending DELETE with the session id',
      async (code) => {
        server.reply(status(code));
        await expect(transport.closeSession('session-9', context())).resolves.toBeUndefined();
        expect(server.received).toHaveLength(1);
        expect(server.received[0]).toMatchObject({ httpMethod: 'DELETE', headers: { 'mcp-session-id': 'session-9' } });
      },
    );

    it('reports another status with the body the server gave', async () => {
      server.reply(status(500, 'database is down'));
      const error = await failureOf(transport.closeSession('session-9', context()));
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ status: 500, delivered: true });
      expect(error.message).toBe(`MCP server "edge" (DELETE ${server.url}) answered HTTP 500: database is down`);
    });

    it('reports another status without a body by its status alone', async () => {
      server.reply(status(503, '  '));
      const error = await failureOf(transport.closeSession('session-9', context()));
      expect(error.message).toBe(`MCP server "edge" (DELETE ${server.url}) answered HTTP 503`);
    });

    it('says an unreachable server could not be reached, and that nothing was delivered', async () => {
      const url = `http://127.0.0.1:${await freePort()}/mcp`;
      const error = await failureOf(new HttpTransport({ url }).closeSession('session-9', context()));
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ delivered: false });
      expect(error.message).toContain(`MCP server "edge" (DELETE ${url}) could not be reached:`);
    });

    it("stops with the caller's abort", async () => {
      const caller = new AbortController();
      caller.abort();
      const error = await failureOf(transport.closeSession('session-9', context({ signal: caller.signal })));
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error.message).toBe('The call to MCP server "edge" was aborted by the caller');
    });
  });

  describe('initialize sent by the caller', () => {
    it('returns the new session id and the handshake it read', async () => {
      server.reply(handshake({ instructions: 'Use echo.' }));
      const message = initialize();
      const outcome = await transport.deliver(message, fresh());
      expect(outcome.sessionId).toBe('new-session');
      expect(outcome.handshake).toEqual({
        protocolVersion: '2025-11-25',
        serverInfo: { name: 'edge', version: '1' },
        capabilities: {},
        instructions: 'Use echo.',
      });
    });

    it('returns an error answer as the body, with no handshake', async () => {
      const message = initialize();
      server.reply(json(200, { jsonrpc: '2.0', id: message.id, error: { code: -32602, message: 'bad version' } }));
      const outcome = await transport.deliver(message, fresh());
      expect(outcome.body).toEqual({ jsonrpc: '2.0', id: message.id, error: { code: -32602, message: 'bad version' } });
      expect(outcome.handshake).toBeUndefined();
    });

    it('returns a result it cannot read as a handshake without one', async () => {
      const message = initialize();
      server.reply(json(200, { jsonrpc: '2.0', id: message.id, result: { protocolVersion: '1999-01-01' } }));
      const outcome = await transport.deliver(message, fresh());
      expect(outcome.body).toMatchObject({ result: { protocolVersion: '1999-01-01' } });
      expect(outcome.handshake).toBeUndefined();
    });
  });

  describe('the handshake before a call', () => {
    it('fails undelivered when initialize is only accepted', async () => {
      server.reply(accepted);
      const error = await failureOf(transport.deliver(request('tools/call', { name: 'x' }), fresh()));
      expect(error).toBeInstanceOf(McpProtocolError);
      expect(error).toMatchObject({ delivered: false });
      expect(error.message).toMatch(
        /^MCP server "edge" answered request "durable-mcp-initialize-[0-9a-f-]+" \(initialize\) with 202 Accepted; expected JSON or an event stream$/,
      );
      expect(server.received.map((r) => r.body?.method)).toEqual(['initialize']);
    });

    it('fails undelivered when notifications/initialized is refused', async () => {
      server.reply(handshake(), status(400, 'no'));
      const error = await failureOf(transport.deliver(request('tools/call', { name: 'x' }), fresh()));
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ status: 400, delivered: false });
      expect(server.received.map((r) => r.body?.method)).toEqual(['initialize', 'notifications/initialized']);
    });

    it('fails undelivered when initialize fails with a 5xx', async () => {
      server.reply(status(502, 'bad gateway'));
      const error = await failureOf(transport.deliver(request('tools/call', { name: 'x' }), fresh()));
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ status: 502, delivered: false });
      expect(error.message).toContain('answered HTTP 502: bad gateway');
    });

    it('fails undelivered when initialize answers with a broken body', async () => {
      server.reply((res) => void res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"jsonrpc":'));
      const error = await failureOf(transport.deliver(request('tools/call', { name: 'x' }), fresh()));
      expect(error).toBeInstanceOf(McpProtocolError);
      expect(error).toMatchObject({ delivered: false });
      expect(error.message).toContain('with a body that is not valid JSON');
    });

    it('refuses the credentials on 401 before the call is sent', async () => {
      server.reply(status(401, 'who are you'));
      const error = await failureOf(transport.deliver(request('tools/call', { name: 'x' }), fresh()));
      expect(error).toMatchObject({ status: 401, delivered: false });
      expect(error.message).toBe(
        `MCP server "edge" (POST ${server.url}) refused the credentials: HTTP 401: who are you. Check the bearer token or headers of this server.`,
      );
    });
  });

  describe('answers that are not answers', () => {
    it('refuses 202 to a request as delivered, naming what came', async () => {
      server.reply(accepted);
      const message = request('tools/call', { name: 'x' });
      const error = await failureOf(transport.deliver(message, inSession()));
      expect(error).toBeInstanceOf(McpProtocolError);
      expect(error).toMatchObject({ delivered: true });
      expect(error.message).toBe(
        `MCP server "edge" answered request ${message.id} (tools/call) with 202 Accepted; expected JSON or an event stream`,
      );
    });

    it('refuses a JSON body that answers another request', async () => {
      server.reply(json(200, { jsonrpc: '2.0', id: 'someone-else', result: {} }));
      const message = request('tools/list');
      const error = await failureOf(transport.deliver(message, inSession()));
      expect(error).toBeInstanceOf(McpProtocolError);
      expect(error.message).toBe(
        `MCP server "edge" answered request ${message.id} (tools/list) with a body that is not the JSON-RPC response to it`,
      );
    });

    it('uses the message of a JSON-RPC error that came with a 5xx as the detail', async () => {
      const message = request('tools/call', { name: 'x' });
      server.reply(json(500, { jsonrpc: '2.0', id: message.id, error: { code: -32603, message: 'tool crashed' } }));
      const error = await failureOf(transport.deliver(message, inSession()));
      expect(error).toMatchObject({ status: 500, delivered: true });
      expect(error.message).toBe(`MCP server "edge" (POST ${server.url}) answered HTTP 500: tool crashed`);
    });

    it('keeps the body of an accepted notification as its raw response', async () => {
      server.reply((res) => void res.writeHead(202, { 'Content-Type': 'text/plain' }).end('queued'));
      const notice: JsonRpcNotification = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' };
      const outcome = await transport.deliver(notice, inSession());
      expect(outcome).toMatchObject({ body: null, rawResponse: 'queued', status: 202 });
    });

    it('sends a stateless request with the stateless revision when none is given', async () => {
      const message = request('server/discover');
      server.reply(result({ resultType: 'complete' }));
      await transport.deliver(message, { sessionId: null, stateless: true, context: context() });
      expect(server.received[0].headers).toMatchObject({
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'server/discover',
      });
      expect(server.received[0].headers['mcp-session-id']).toBeUndefined();
    });
  });

  describe('requests the server makes during a call', () => {
    /** A call answered on an SSE stream after the server asked `ask` and got the client's reply (answered with `replyWith`). */
    function askDuring(ask: JsonRpcRequest, replyWith: (res: ServerResponse) => void): void {
      let replied: () => void = () => undefined;
      const done = new Promise<void>((resolve) => (replied = resolve));
      server.reply(
        async (res, body) => {
          openSse(res);
          res.write(sseEvent(ask));
          await done;
          res.end(sseEvent({ jsonrpc: '2.0', id: body?.id, result: { content: [] } }));
        },
        (res) => {
          replyWith(res);
          replied();
        },
      );
    }

    it.each<[string, () => never, Record<string, unknown>]>([
      [
        'an McpRpcError as that JSON-RPC error',
        () => {
          throw new McpRpcError(-32001, 'user declined', { why: 'busy' });
        },
        { code: -32001, message: 'user declined', data: { why: 'busy' } },
      ],
      [
        'any other failure as -32603 with its message',
        () => {
          throw new Error('handler crashed');
        },
        { code: -32603, message: 'handler crashed' },
      ],
      [
        'a thrown value that is not an Error by its text',
        () => {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- the case under test: a thrown non-Error
          throw 'no way';
        },
        { code: -32603, message: 'no way' },
      ],
    ])('answers a handler that throws %s', async (_case, handler, error) => {
      askDuring(
        { jsonrpc: '2.0', id: 'srv-1', method: 'sampling/createMessage', params: {} },
        (res) => void res.writeHead(202).end(),
      );
      const outcome = await transport.deliver(
        request('tools/call', { name: 'x' }),
        inSession({ onServerRequest: async () => handler() }),
      );
      expect(outcome.body).toMatchObject({ result: { content: [] } });
      expect(server.received[1].body).toEqual({ jsonrpc: '2.0', id: 'srv-1', error });
    });

    it("fails the call, delivered, when the server refuses the client's answer", async () => {
      askDuring(
        { jsonrpc: '2.0', id: 'srv-2', method: 'roots/list' },
        (res) => void res.writeHead(409, { 'Content-Type': 'text/plain' }).end('stale'),
      );
      const error = await failureOf(
        transport.deliver(
          request('tools/call', { name: 'x' }),
          inSession({ onServerRequest: async () => ({ roots: [] }) }),
        ),
      );
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ status: 409, delivered: true });
      expect(error.message).toBe(
        `Could not answer the "roots/list" request of MCP server "edge" (${server.url}): HTTP 409 stale`,
      );
    });
  });

  describe('event streams', () => {
    /** Answers the POST with an SSE stream of `chunks` (raw SSE text), then ends it. */
    const stream =
      (...chunks: string[]): ScriptedReply =>
      (res) => {
        openSse(res);
        for (const chunk of chunks) res.write(chunk);
        res.end();
      };

    it('fails delivered when the stream ends before the answer and gave no event id to resume from', async () => {
      server.reply(stream(sseEvent({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } })));
      const message = request('tools/call', { name: 'x' });
      const error = await failureOf(transport.deliver(message, inSession()));
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ delivered: true });
      expect(error.message).toBe(
        `MCP server "edge" closed the event stream before answering request ${message.id} (tools/call)`,
      );
    });

    it('fails delivered when the server refuses to resume the stream, naming the status', async () => {
      server.reply(
        stream(sseEvent({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } }, 'ev-1', 1)),
        status(404, 'gone'),
      );
      const error = await failureOf(transport.deliver(request('tools/call', { name: 'x' }), inSession()));
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ status: 404, delivered: true });
      expect(error.message).toBe(
        'MCP server "edge" refused to resume the event stream (GET with Last-Event-ID): HTTP 404',
      );
      expect(server.received[1]).toMatchObject({ httpMethod: 'GET', headers: { 'last-event-id': 'ev-1' } });
    });

    it('stops resuming after maxStreamResumptions', async () => {
      const limited = new HttpTransport({ url: server.url, retry: { retries: 0 }, maxStreamResumptions: 1 });
      const progress = (id: string) =>
        stream(sseEvent({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } }, id, 1));
      server.reply(progress('a'), progress('b'));
      const error = await failureOf(limited.deliver(request('tools/call', { name: 'x' }), inSession()));
      expect(error.message).toContain('closed the event stream before answering request');
      expect(server.received.map((r) => r.httpMethod)).toEqual(['POST', 'GET']);
    });

    it('skips events that are not its answer: other event types, blank data, other ids, non-JSON-RPC values', async () => {
      const message = request('tools/list');
      server.reply(
        stream(
          'event: ping\ndata: {}\n\n',
          'event: message\ndata:  \n\n',
          sseEvent({ jsonrpc: '2.0', id: 'other', result: { tools: ['wrong'] } }),
          sseEvent(42),
          sseEvent({ jsonrpc: '2.0', id: message.id, result: { tools: [] } }),
        ),
      );
      const outcome = await transport.deliver(message, inSession());
      expect(outcome.body).toEqual({ jsonrpc: '2.0', id: message.id, result: { tools: [] } });
    });

    it.each<[string, string, string]>([
      [
        'not valid JSON',
        'event: message\ndata: {"jsonrpc":\n\n',
        'sent an event that is not valid JSON on the stream of request',
      ],
      [
        'nested too deeply',
        `event: message\ndata: ${'['.repeat(200)}${']'.repeat(200)}\n\n`,
        'sent an event nested deeper than',
      ],
    ])('fails with McpProtocolError, delivered, on an event %s', async (_case, chunk, text) => {
      server.reply(stream(chunk));
      const error = await failureOf(transport.deliver(request('tools/call', { name: 'x' }), inSession()));
      expect(error).toBeInstanceOf(McpProtocolError);
      expect(error).toMatchObject({ delivered: true });
      expect(error.message).toContain(text);
    });

    it('fails with McpProtocolError on an event longer than maxEventChars', async () => {
      const small = new HttpTransport({ url: server.url, retry: { retries: 0 }, maxEventChars: 64 });
      server.reply(
        stream(sseEvent({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'z'.repeat(500) } })),
      );
      const message = request('tools/call', { name: 'x' });
      const error = await failureOf(small.deliver(message, inSession()));
      expect(error).toBeInstanceOf(McpProtocolError);
      expect(error.message).toBe(
        `MCP server "edge" sent an event longer than maxEventChars (64 characters) on the stream of request ${message.id}`,
      );
    });
  });
  // The documented defaults, as numbers: 16 MiB (16,777,216) for both caps. An answer of exactly
  // the cap is read; one byte or character more fails. A change of either default fails here.
  describe('the documented 16 MiB caps, with the default options', () => {
    const CAP = 16_777_216;
    /** A JSON-RPC answer to request `id` whose JSON text is exactly `size` characters (all ASCII, so as many bytes). */
    const answerOf = (id: unknown, size: number): string => {
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`;
      const tail = '"}]}}';
      return `${head}${'a'.repeat(size - head.length - tail.length)}${tail}`;
    };

    it.each<[string, number, boolean]>([
      ['with Content-Length, exactly the cap', CAP, true],
      ['with Content-Length, one byte over', CAP + 1, true],
      ['chunked, exactly the cap', CAP, false],
      ['chunked, one byte over', CAP + 1, false],
    ])('a JSON answer %s', async (_case, size, declared) => {
      server.reply((res, body) => {
        const text = answerOf(body?.id, size);
        expect(Buffer.byteLength(text)).toBe(size);
        res.writeHead(200, {
          'Content-Type': 'application/json',
          ...(declared ? { 'Content-Length': String(size) } : {}),
        });
        res.write(text.slice(0, 1024));
        res.end(text.slice(1024));
      });
      const message = request('tools/call', { name: 'x' });
      const outcome = transport.deliver(message, inSession());
      if (size === CAP) {
        const { body } = await outcome;
        expect(body).toEqual(JSON.parse(answerOf(message.id, CAP)));
      } else {
        const error = await failureOf(outcome);
        expect(error).toBeInstanceOf(McpProtocolError);
        expect(error.message).toBe(
          'MCP server "edge" sent a response body larger than maxResponseBytes (16777216 bytes)',
        );
      }
    });

    it.each<[string, number]>([
      ['exactly the cap', CAP],
      ['one character over', CAP + 1],
    ])('an SSE event whose data line is %s', async (_case, lineChars) => {
      server.reply((res, body) => {
        const json = answerOf(body?.id, lineChars - 'data: '.length);
        openSse(res);
        res.write('event: message\n');
        res.end(`data: ${json}\n\n`);
      });
      const message = request('tools/call', { name: 'x' });
      const outcome = transport.deliver(message, inSession());
      if (lineChars === CAP) {
        const { body } = await outcome;
        expect(body).toEqual(JSON.parse(answerOf(message.id, CAP - 'data: '.length)));
      } else {
        const error = await failureOf(outcome);
        expect(error).toBeInstanceOf(McpProtocolError);
        expect(error.message).toBe(
          `MCP server "edge" sent an event longer than maxEventChars (16777216 characters) on the stream of request ${message.id}`,
        );
      }
    });
  });
});
