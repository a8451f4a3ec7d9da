import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { McpTimeoutError, McpTransportError } from '../../src/mcp/errors';
import { type JsonRpcNotification, type JsonRpcRequest } from '../../src/mcp/protocol';
import { HttpSessionExpiredError } from '../../src/mcp/client/transports/http/http-session-expired.errors';
import { HttpTransport } from '../../src/mcp/client/transports/http/http.transport';
import type { McpTransportContext } from '../../src/mcp/client/transports/mcp-transport.interface';
import { startSdkHttpServer, type SdkHttpServer } from '../fixtures/http/sdk-http-server';

const context = (extra: Partial<McpTransportContext> = {}): McpTransportContext => ({
  server: 'sdk',
  scopeKey: '',
  timeoutMs: 10_000,
  ...extra,
});
let nextId = 1;
const request = (method: string, params?: Record<string, unknown>): JsonRpcRequest => ({
  jsonrpc: '2.0',
  id: nextId++,
  method,
  ...(params ? { params } : {}),
});
const callTool = (name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>) =>
  request('tools/call', { name, arguments: args, ...(meta ? { _meta: meta } : {}) });

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe.each([
  ['JSON responses', true],
  ['SSE responses', false],
])('HttpTransport against the official SDK 1.x server (%s)', (_label, enableJsonResponse) => {
  let server: SdkHttpServer;
  let transport: HttpTransport;

  beforeEach(async () => {
    server = await startSdkHttpServer({ enableJsonResponse });
    transport = new HttpTransport({ url: server.url });
  });
  afterEach(() => server.close());

  it('opens the session itself, then echoes the session id and protocol version', async () => {
    const listed = await transport.deliver(request('tools/list'), { sessionId: null, context: context() });
    expect(listed.handshake).toMatchObject({ protocolVersion: '2025-11-25', serverInfo: { name: 'sdk-fixture' } });
    expect(listed.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const tools = (listed.body as unknown as { result: { tools: { name: string }[] } }).result.tools;
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'progress', 'sample', 'elicit', 'hang']));
    expect(server.received.map((r) => r.body?.method)).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/list',
    ]);
    expect(server.received[2].headers['mcp-session-id']).toBe(listed.sessionId);
    expect(server.received[2].headers['mcp-protocol-version']).toBe('2025-11-25');
    expect(server.received[0].headers.accept).toBe('application/json, text/event-stream');

    const called = await transport.deliver(callTool('echo', { text: 'hello' }), {
      sessionId: listed.sessionId,
      protocolVersion: '2025-11-25',
      context: context(),
    });
    expect(called.handshake).toBeUndefined();
    expect(called.sessionId).toBe(listed.sessionId);
    expect(called.status).toBe(200);
    expect(called.body).toMatchObject({ result: { content: [{ type: 'text', text: 'hello' }] } });
    expect(JSON.parse(called.rawRequest)).toMatchObject({ method: 'tools/call', params: { name: 'echo' } });
    expect(called.rawResponse).toContain('"text":"hello"');
  });

  it('returns a JSON-RPC error response as the body', async () => {
    const first = await transport.deliver(request('tools/list'), { sessionId: null, context: context() });
    const unknown = await transport.deliver(request('no/such/method'), {
      sessionId: first.sessionId,
      protocolVersion: '2025-11-25',
      context: context(),
    });
    expect(unknown.body).toMatchObject({ error: { code: -32601 } });
  });

  it('re-initializes after a 404 for tools/list, but never re-sends tools/call', async () => {
    const first = await transport.deliver(request('tools/list'), { sessionId: null, context: context() });
    await server.forgetSessions();

    const again = await transport.deliver(request('tools/list'), {
      sessionId: first.sessionId,
      protocolVersion: '2025-11-25',
      context: context(),
    });
    expect(again.handshake?.protocolVersion).toBe('2025-11-25');
    expect(again.sessionId).not.toBe(first.sessionId);
    expect(again.body).toHaveProperty('result.tools');

    await server.forgetSessions();
    const runsBefore = server.toolRuns.length;
    const call = callTool('echo', { text: 'once' });
    const error = await transport
      .deliver(call, { sessionId: again.sessionId, protocolVersion: '2025-11-25', context: context() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpSessionExpiredError);
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error).toMatchObject({ delivered: false, status: 404 });
    expect((error as Error).message).toContain('session');
    // Checked once the event loop has turned, so a tool started by the refused POST would show.
    await new Promise(setImmediate);
    expect(server.toolRuns.length).toBe(runsBefore);
    expect(server.received.filter((r) => r.body?.id === call.id)).toHaveLength(1);
    expect(server.received.at(-1)?.body?.method).toBe('tools/call');
  });

  it('closes the session with DELETE', async () => {
    const first = await transport.deliver(request('tools/list'), { sessionId: null, context: context() });
    await transport.closeSession(first.sessionId as string, context());
    expect(server.deletedSessions).toEqual([first.sessionId]);
    const after = server.received.at(-1);
    expect(after?.httpMethod).toBe('DELETE');
    expect(after?.headers['mcp-session-id']).toBe(first.sessionId);
  });

  it('times out a hanging tool, sends notifications/cancelled, and reports delivered', async () => {
    const first = await transport.deliver(request('tools/list'), { sessionId: null, context: context() });
    const call = callTool('hang');
    const error = await transport
      .deliver(call, {
        sessionId: first.sessionId,
        protocolVersion: '2025-11-25',
        context: context({ timeoutMs: 300 }),
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpTimeoutError);
    expect(error).toMatchObject({ delivered: true, timeoutMs: 300 });
    const cancelled = server.received.find((r) => r.body?.method === 'notifications/cancelled');
    expect(cancelled?.body?.params).toMatchObject({ requestId: call.id });
    expect(cancelled?.headers['mcp-session-id']).toBe(first.sessionId);
    expect(server.toolRuns).toContain('hang');
  });

  it('stops on the caller signal and sends notifications/cancelled', async () => {
    const first = await transport.deliver(request('tools/list'), { sessionId: null, context: context() });
    const abort = new AbortController();
    const call = callTool('hang');
    const pending = transport.deliver(call, {
      sessionId: first.sessionId,
      protocolVersion: '2025-11-25',
      context: context({ signal: abort.signal }),
    });
    await waitFor(() => server.toolRuns.includes('hang'), 'the hang tool to start');
    abort.abort();
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error).toMatchObject({ delivered: true });
    expect(
      server.received.some(
        (r) =>
          r.body?.method === 'notifications/cancelled' &&
          (r.body.params as { requestId: unknown }).requestId === call.id,
      ),
    ).toBe(true);
  });

  it('reports a refused connection as not delivered, also for tools/call', async () => {
    const port = await closedPort();
    const dead = new HttpTransport({ url: `http://127.0.0.1:${port}/mcp`, retry: { retries: 1, initialDelayMs: 1 } });
    for (const message of [request('tools/list'), callTool('echo', { text: 'x' })]) {
      const error = await dead
        .deliver(message, { sessionId: 'gone', protocolVersion: '2025-11-25', context: context() })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ delivered: false });
      expect((error as Error).message).toContain('ECONNREFUSED');
    }
  });

  it('sends the bearer token and keeps it out of raw fields and errors', async () => {
    const token = 'sk-test-8c1f2e9d7a';
    const guarded = await startSdkHttpServer({ enableJsonResponse, requiredToken: token });
    try {
      const authed = new HttpTransport({ url: guarded.url, bearerToken: token });
      const shown = await authed.deliver(callTool('show_authorization'), { sessionId: null, context: context() });
      expect(guarded.received.every((r) => r.headers.authorization === `Bearer ${token}`)).toBe(true);
      expect(shown.body).toHaveProperty('result.content');
      expect(shown.rawRequest).not.toContain(token);
      expect(shown.rawResponse).not.toContain(token);
      expect(shown.rawResponse).toContain('Bearer [redacted]');

      const wrong = new HttpTransport({ url: guarded.url, bearerToken: 'sk-wrong-55aa77bb' });
      const error = await wrong
        .deliver(request('tools/list'), { sessionId: null, context: context() })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ status: 401, delivered: false });
      expect((error as Error).message).toContain('401');
      expect((error as Error).message).not.toContain('sk-wrong-55aa77bb');
    } finally {
      await guarded.close();
    }
  });
});

describe('HttpTransport over SSE: notifications and server->client requests', () => {
  let server: SdkHttpServer;
  let sessionId: string | null;
  const capabilities = { sampling: {}, elicitation: {} };

  beforeEach(async () => {
    server = await startSdkHttpServer({ enableJsonResponse: false });
  });
  afterEach(() => server.close());

  async function open(transport: HttpTransport): Promise<void> {
    sessionId = (await transport.deliver(request('tools/list'), { sessionId: null, context: context() })).sessionId;
  }

  it('passes progress and log notifications sent during the call to onNotification', async () => {
    const transport = new HttpTransport({ url: server.url });
    await open(transport);
    const seen: JsonRpcNotification[] = [];
    const result = await transport.deliver(callTool('progress', { steps: 3 }, { progressToken: 'p-1' }), {
      sessionId,
      protocolVersion: '2025-11-25',
      context: context({ onNotification: (n) => seen.push(n) }),
    });
    expect(result.body).toMatchObject({ result: { content: [{ text: 'done 3' }] } });
    expect(seen.filter((n) => n.method === 'notifications/progress').map((n) => n.params?.progress)).toEqual([1, 2, 3]);
    expect(seen.filter((n) => n.method === 'notifications/message').map((n) => n.params?.data)).toEqual([
      'step 1',
      'step 2',
      'step 3',
    ]);
    expect(result.rawResponse).toContain('event: message');
    expect(result.rawResponse).toContain('notifications/progress');
  });

  it('answers sampling through onServerRequest by POSTing the response back', async () => {
    const transport = new HttpTransport({ url: server.url, capabilities });
    await open(transport);
    const asked: JsonRpcRequest[] = [];
    const result = await transport.deliver(callTool('sample'), {
      sessionId,
      protocolVersion: '2025-11-25',
      context: context({
        onServerRequest: async (req) => {
          asked.push(req);
          return { role: 'assistant', content: { type: 'text', text: 'hi there' }, model: 'fixture-model' };
        },
      }),
    });
    expect(asked.map((r) => r.method)).toEqual(['sampling/createMessage']);
    expect(result.body).toMatchObject({ result: { content: [{ text: 'model said: hi there' }] } });
    const reply = server.received.find((r) => r.body && 'result' in r.body && r.body.id === asked[0].id);
    expect(reply?.headers['mcp-session-id']).toBe(sessionId);
    expect(reply?.headers['mcp-protocol-version']).toBe('2025-11-25');
  });

  it('answers elicitation through onServerRequest', async () => {
    const transport = new HttpTransport({ url: server.url, capabilities });
    await open(transport);
    const result = await transport.deliver(callTool('elicit'), {
      sessionId,
      protocolVersion: '2025-11-25',
      context: context({ onServerRequest: async () => ({ action: 'accept', content: { name: 'Ada' } }) }),
    });
    expect(result.body).toMatchObject({ result: { content: [{ text: 'accept: Ada' }] } });
  });

  it('answers -32601 when no handler is given', async () => {
    const transport = new HttpTransport({ url: server.url, capabilities });
    await open(transport);
    const result = await transport.deliver(callTool('sample'), {
      sessionId,
      protocolVersion: '2025-11-25',
      context: context(),
    });
    const reply = server.received.find((r) => r.body && 'error' in r.body);
    expect(reply?.body).toMatchObject({ error: { code: -32601 } });
    expect(result.body).toMatchObject({ result: { isError: true } });
  });
});
