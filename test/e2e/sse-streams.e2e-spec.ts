import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  McpError,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { MCP_SESSION_NOTIFIER, type McpSessionNotifier } from '../../src/mcp/interfaces/mcp-session-notifier.interface';
import { McpModule } from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { AbortProbe, SseTools } from '../fixtures/sse/sse-tools';
import { SseReader, messagesOf } from '../fixtures/sse/sse-reader';
import { HTTP_ADAPTERS, startApp, type RunningApp } from '../support/http-app';
import { MCP_ACCEPT, callRequest, openSession, send, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

type Capabilities = ConstructorParameters<typeof Client>[1];

/**
 * SSE on one replica (no Redis: process-local routing): notifications and server->client
 * requests on the POST answer, cancellation, and the session's GET stream.
 */
describe.each(HTTP_ADAPTERS)('SSE streams of 2025 sessions (one replica, %s)', (adapter) => {
  let db: TestDatabase;
  let server: RunningApp;
  let url: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(
      db.url,
      { imports: [McpModule.forRoot({ auth: fixtureAuth, providers: [SseTools] })], providers: [SseTools] },
      adapter,
    );
    url = `${server.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await server?.close();
    await db?.drop();
  });

  async function connect(
    options: Capabilities = { capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: false } } },
  ) {
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
    });
    const client = new Client({ name: 'sse-e2e', version: '1.0.0' }, options);
    clients.push(client);
    await client.connect(transport);
    return { client, sessionId: transport.sessionId as string };
  }

  function rawCall(sessionId: string, body: unknown, init: { accept?: string; signal?: AbortSignal } = {}) {
    return fetch(url, {
      method: 'POST',
      signal: init.signal,
      headers: {
        Authorization: 'Bearer token-alice',
        'Content-Type': 'application/json',
        Accept: init.accept ?? MCP_ACCEPT,
        'Mcp-Session-Id': sessionId,
        ...versionHeader(),
      },
      body: JSON.stringify(body),
    });
  }

  async function eventRows(sessionId: string): Promise<{ method: string | null; kind: string; status: number }[]> {
    return db.dataSource.query(
      `SELECT e.method, e.kind, e.status FROM mcp_events e JOIN mcp_inbound_sessions s ON s.id = e.session_ref WHERE s.session_id = $1 ORDER BY e.created_at`,
      [sessionId],
    );
  }

  it('progress notifications reach the SDK client (onprogress) and the call leaves one event row', async () => {
    const { client, sessionId } = await connect();
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const result = await client.callTool({ name: 'progress_steps', arguments: { steps: 3 } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    expect(result.content).toEqual([{ type: 'text', text: 'done 3' }]);
    expect(progress).toEqual([1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step}` })));
    const rows = await eventRows(sessionId);
    expect(rows.filter((row) => row.method === 'tools/call')).toEqual([
      { method: 'tools/call', kind: 'request', status: 200 },
    ]);
  });

  it('log notifications at or above the level set with logging/setLevel reach the SDK client', async () => {
    const { client } = await connect();
    const logs: unknown[] = [];
    client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (notification) => void logs.push(notification.params),
    );
    await client.setLoggingLevel('info');
    await client.callTool({ name: 'progress_steps', arguments: { steps: 2 } });
    expect(logs).toEqual([1, 2].map((step) => ({ level: 'info', logger: 'sse-tools', data: { step } })));
  });

  it('on the wire: an SSE answer with a priming event, event ids of one stream, the response last, then the end', async () => {
    const { sessionId } = await openSession(url);
    const response = await rawCall(sessionId, {
      ...callRequest(7, 'progress_steps', { steps: 2 }),
      params: { name: 'progress_steps', arguments: { steps: 2 }, _meta: { progressToken: 'tok' } },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    const events = await new SseReader(response).rest();
    expect(events[0]).toEqual({ id: expect.any(String), retry: expect.any(Number), data: '' });
    const ids = events.map((event) => event.id);
    expect(new Set(ids).size).toBe(events.length);
    expect(new Set(ids.map((id) => id?.replace(/_\d+$/, ''))).size).toBe(1);
    const messages = messagesOf(events);
    expect(messages.map((m) => m.method ?? 'response')).toEqual([
      'notifications/progress',
      'notifications/progress',
      'response',
    ]);
    expect(messages[0].params).toEqual({ progressToken: 'tok', progress: 1, total: 2, message: 'step 1' });
    expect(messages[2]).toEqual({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'done 2' }] } });
  });

  it('stays a plain JSON answer when the handler emits nothing or the client accepts only JSON', async () => {
    const { sessionId } = await openSession(url);
    const quiet = await rawCall(sessionId, callRequest(1, 'progress_steps', { steps: 2 }));
    expect(quiet.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await quiet.json()) as { result: { content: unknown } }).result.content).toEqual([
      { type: 'text', text: 'done 2' },
    ]);
    const jsonOnly = await rawCall(
      sessionId,
      {
        ...callRequest(2, 'progress_steps'),
        params: { name: 'progress_steps', arguments: { steps: 1 }, _meta: { progressToken: 1 } },
      },
      { accept: 'application/json' },
    );
    expect(jsonOnly.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await jsonOnly.json()) as { result: { content: unknown } }).result.content).toEqual([
      { type: 'text', text: 'done 1' },
    ]);
  });

  it('elicitation, sampling and roots round trips with the SDK client; each answer is its own POST and row', async () => {
    const { client, sessionId } = await connect();
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      expect(request.params.message).toBe('What is your name?');
      return { action: 'accept', content: { name: 'Ada' } };
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
      role: 'assistant',
      model: 'test-model',
      content: { type: 'text', text: `echo ${(request.params.messages[0].content as { text: string }).text}` },
    }));
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [{ uri: 'file:///a' }, { uri: 'file:///b', name: 'b' }],
    }));
    expect((await client.callTool({ name: 'ask_name', arguments: {} })).content).toEqual([
      { type: 'text', text: 'hello Ada' },
    ]);
    expect((await client.callTool({ name: 'ask_model', arguments: { prompt: 'hi' } })).content).toEqual([
      { type: 'text', text: 'test-model said: echo hi' },
    ]);
    expect((await client.callTool({ name: 'roots', arguments: {} })).content).toEqual([
      { type: 'text', text: 'file:///a,file:///b' },
    ]);
    const rows = await eventRows(sessionId);
    expect(rows.filter((row) => row.method === 'tools/call')).toHaveLength(3);
    expect(rows.filter((row) => row.kind === 'response')).toEqual(
      Array(3).fill({ method: null, kind: 'response', status: 202 }),
    );
  });

  it('a client error answer rejects ctx.elicit with McpClientRequestError (the tool fails, the call does not hang)', async () => {
    const { client } = await connect();
    client.setRequestHandler(ElicitRequestSchema, async () => {
      throw new Error('user closed the dialog');
    });
    const result = await client.callTool({ name: 'ask_name', arguments: {} });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0].text).toMatch(
      /client refused elicitation\/create.*user closed the dialog/,
    );
  });

  it('a client without the elicitation capability gets a clear error from ctx.elicit', async () => {
    const { client } = await connect({ capabilities: {} });
    await expect(client.callTool({ name: 'ask_name', arguments: {} })).rejects.toThrow(
      /did not declare the "elicitation" capability/,
    );
  });

  it('notifications/cancelled aborts ctx.signal', async () => {
    const { client } = await connect();
    const abort = new AbortController();
    const call = client.callTool({ name: 'wait_for_abort', arguments: { key: 'cancel-1' } }, undefined, {
      signal: abort.signal,
    });
    await AbortProbe.whenStarted('cancel-1');
    abort.abort('the user changed their mind');
    const cancelled = await call.catch((e: unknown) => e);
    expect(cancelled).toBeInstanceOf(McpError);
    expect(cancelled).toMatchObject({
      code: ErrorCode.RequestTimeout,
      message: expect.stringContaining('the user changed their mind'),
    });
    await expect(AbortProbe.whenAborted('cancel-1')).resolves.toMatch(/changed their mind/);
  });

  it('closing the SSE stream aborts ctx.signal', async () => {
    const { sessionId } = await openSession(url);
    const abort = new AbortController();
    const body = {
      jsonrpc: '2.0',
      id: 'c-1',
      method: 'tools/call',
      params: { name: 'wait_for_abort', arguments: { key: 'close-1', announce: true }, _meta: { progressToken: 'p' } },
    };
    const reader = new SseReader(await rawCall(sessionId, body, { signal: abort.signal }));
    expect((await reader.next())?.data).toBe('');
    expect(JSON.parse((await reader.next())!.data).method).toBe('notifications/progress');
    abort.abort();
    await expect(AbortProbe.whenAborted('close-1')).resolves.toMatch(/closed the connection/);
  });

  it('GET opens the session stream: session notifications arrive there, a second GET gets 409, DELETE ends it', async () => {
    const { sessionId } = await openSession(url);
    const headers = {
      Authorization: 'Bearer token-alice',
      Accept: 'text/event-stream',
      'Mcp-Session-Id': sessionId,
      ...versionHeader(),
    };
    expect((await send(url, 'GET', { token: null, sessionId, headers: { Accept: 'text/event-stream' } })).status).toBe(
      401,
    );
    expect(
      (await send(url, 'GET', { token: 'token-bob', sessionId, headers: { Accept: 'text/event-stream' } })).status,
    ).toBe(404);
    const rowsBefore = (await eventRows(sessionId)).length;
    const response = await fetch(url, { headers });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = new SseReader(response);
    expect(await reader.next()).toEqual({ id: expect.any(String), retry: expect.any(Number), data: '' });
    const second = await fetch(url, { headers });
    expect(second.status).toBe(409);
    await second.body?.cancel();
    const notifier = server.app.get<McpSessionNotifier>(MCP_SESSION_NOTIFIER, { strict: false });
    await notifier.notifySession(sessionId, { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    const event = await reader.next();
    expect(event?.id).toMatch(/_1$/);
    expect(JSON.parse(event!.data)).toEqual({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    expect((await send(url, 'DELETE', { sessionId })).status).toBe(204);
    expect(await reader.next()).toBeNull();
    expect((await eventRows(sessionId)).length).toBe(rowsBefore + 1);
  });
});
