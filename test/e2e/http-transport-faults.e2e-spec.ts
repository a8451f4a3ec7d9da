import type { ServerResponse } from 'node:http';
import { McpProtocolError, McpTransportError } from '../../src/mcp/errors';
import { type JsonRpcNotification, type JsonRpcRequest } from '../../src/mcp/protocol';
import { HttpTransport } from '../../src/mcp/client/transports/http/http.transport';
import type {
  McpTransportContext,
  McpTransportDeliverOptions,
} from '../../src/mcp/client/transports/mcp-transport.interface';
import {
  json,
  openSse,
  reset,
  result,
  sseEvent,
  startScriptedHttpServer,
  status,
  type ScriptedHttpServer,
} from '../fixtures/http/scripted-http-server';

const context = (extra: Partial<McpTransportContext> = {}): McpTransportContext => ({
  server: 'scripted',
  scopeKey: '',
  timeoutMs: 10_000,
  ...extra,
});
const inSession = (extra: Partial<McpTransportContext> = {}): McpTransportDeliverOptions => ({
  sessionId: 'session-1',
  protocolVersion: '2025-11-25',
  context: context(extra),
});
let nextId = 1;
const request = (method: string, params?: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: nextId++,
  method,
  ...(params ? { params } : {}),
});
const toolsCall = () => request('tools/call', { name: 'work', arguments: {} });

describe('HttpTransport against a scripted HTTP server (faults and edge cases)', () => {
  let server: ScriptedHttpServer;
  let transport: HttpTransport;

  beforeEach(async () => {
    server = await startScriptedHttpServer();
    transport = new HttpTransport({ url: server.url, retry: { retries: 2, initialDelayMs: 1, maxDelayMs: 5 } });
  });
  afterEach(() => server.close());

  it('retries tools/list after a 503 and returns the answer', async () => {
    server.reply(status(503, 'busy'), result({ tools: [] }));
    const listed = await transport.deliver(request('tools/list'), inSession());
    expect(listed.body).toMatchObject({ result: { tools: [] } });
    expect(server.received).toHaveLength(2);
  });

  it('never retries tools/call after a 500, and says it may have been delivered', async () => {
    server.reply(status(500, 'exploded'), result({ content: [] }));
    const error = await transport.deliver(toolsCall(), inSession()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error).toMatchObject({ status: 500, delivered: true });
    expect((error as Error).message).toContain('exploded');
    expect(server.received).toHaveLength(1);
  });

  it('treats a reset after sending as delivered for tools/call, and retries tools/list', async () => {
    server.reply(reset);
    const error = await transport.deliver(toolsCall(), inSession()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error).toMatchObject({ delivered: true });
    expect(server.received).toHaveLength(1);

    server.reply(reset, result({ tools: [] }));
    const listed = await transport.deliver(request('tools/list'), inSession());
    expect(listed.body).toMatchObject({ result: { tools: [] } });
    expect(server.received).toHaveLength(3);
  });

  it('rejects a body that is not JSON with McpProtocolError', async () => {
    server.reply(
      (res) => void res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"jsonrpc": "2.0", oops'),
    );
    const error = await transport.deliver(request('tools/list'), inSession()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpProtocolError);
    expect(error).toMatchObject({ delivered: true });
  });

  it('returns a JSON-RPC error that arrives with a 4xx as the body', async () => {
    server.reply((res, body) => {
      const answer = { jsonrpc: '2.0', id: body?.id, error: { code: -32602, message: 'Invalid params' } };
      res.writeHead(400, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
    });
    const answered = await transport.deliver(request('tools/list'), inSession());
    expect(answered.status).toBe(400);
    expect(answered.body).toMatchObject({ error: { code: -32602 } });
  });

  it('takes 202 for a notification and returns no body', async () => {
    server.reply(status(202));
    const notice: JsonRpcNotification = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' };
    const sent = await transport.deliver(notice, inSession());
    expect(sent).toMatchObject({ body: null, status: 202, rawResponse: null, sessionId: 'session-1' });
    expect(server.received[0].headers['mcp-session-id']).toBe('session-1');
  });

  it('does not retry a 401', async () => {
    server.reply(json(401, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Unauthorized' } }), result({}));
    const error = await transport.deliver(request('tools/list'), inSession()).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401, delivered: false });
    expect(server.received).toHaveLength(1);
  });

  it('tries the standalone GET stream of a session once: a 405 is remembered for the endpoint', async () => {
    server.reply(result({ tools: [] }), result({ content: [] }));
    await transport.deliver(request('tools/list'), inSession());
    await transport.deliver(toolsCall(), inSession());
    expect(server.standaloneGets).toHaveLength(1);
    expect(server.standaloneGets[0].headers).toMatchObject({
      accept: 'text/event-stream',
      'mcp-session-id': 'session-1',
      'mcp-protocol-version': '2025-11-25',
    });
    expect(server.received.map((r) => r.httpMethod)).toEqual(['POST', 'POST']);
  });

  it('resumes a stream that ends early with GET and Last-Event-ID', async () => {
    const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } };
    server.reply(
      (res) => {
        openSse(res);
        res.write(sseEvent('', 'e1', 5));
        res.end(sseEvent(progress, 'e2'));
      },
      (res) => {
        openSse(res);
        res.end(sseEvent({ jsonrpc: '2.0', id: server.received[0].body?.id, result: { tools: [] } }, 'e3'));
      },
    );
    const seen: JsonRpcNotification[] = [];
    const listed = await transport.deliver(request('tools/list'), inSession({ onNotification: (n) => seen.push(n) }));
    expect(listed.body).toMatchObject({ result: { tools: [] } });
    expect(seen.map((n) => n.method)).toEqual(['notifications/progress']);
    expect(server.received[1]).toMatchObject({
      httpMethod: 'GET',
      headers: { 'last-event-id': 'e2', 'mcp-session-id': 'session-1', accept: 'text/event-stream' },
    });
    expect(listed.rawResponse).toContain('id: e2');
    expect(listed.rawResponse).toContain('id: e3');
  });

  it('answers ping with {} and an unhandled request with -32601 over the stream', async () => {
    let replies = 0;
    let allReplied: () => void = () => undefined;
    const replied = new Promise<void>((resolve) => (allReplied = resolve));
    const takeReply = (res: ServerResponse) => {
      res.writeHead(202).end();
      if (++replies === 2) allReplied();
    };
    server.reply(
      async (res, body) => {
        openSse(res);
        res.write(sseEvent({ jsonrpc: '2.0', id: 'srv-ping', method: 'ping' }));
        res.write(sseEvent({ jsonrpc: '2.0', id: 'srv-roots', method: 'roots/list' }));
        await replied;
        res.end(sseEvent({ jsonrpc: '2.0', id: body?.id, result: { content: [] } }));
      },
      takeReply,
      takeReply,
    );
    const called = await transport.deliver(toolsCall(), inSession());
    expect(called.body).toMatchObject({ result: { content: [] } });
    const answers = server.received.slice(1).map((r) => r.body);
    expect(answers).toEqual(
      expect.arrayContaining([
        { jsonrpc: '2.0', id: 'srv-ping', result: {} },
        { jsonrpc: '2.0', id: 'srv-roots', error: expect.objectContaining({ code: -32601 }) },
      ]),
    );
  });

  it('caps rawResponse', async () => {
    const capped = new HttpTransport({ url: server.url, maxRawResponseLength: 64 });
    server.reply(result({ text: 'x'.repeat(1000) }));
    const message = request('tools/list');
    const answered = await capped.deliver(message, inSession());
    expect(answered.body).toMatchObject({ result: { text: 'x'.repeat(1000) } });
    // The first 64 characters of what the server sent, and how many more there were.
    const sent = JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { text: 'x'.repeat(1000) } });
    expect(answered.rawResponse).toBe(`${sent.slice(0, 64)}\n[truncated: ${sent.length - 64} more characters]`);
  });
});
