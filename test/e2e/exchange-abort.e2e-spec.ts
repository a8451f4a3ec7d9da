import { Injectable } from '@nestjs/common';
import { request as httpRequest } from 'node:http';
import { McpModule, McpTool, type McpToolContext } from '../../src/mcp';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { routingHeaders, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { HTTP_ADAPTERS, startApp, type RunningApp } from '../support/http-app';
import { callRequest, openSession, post, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

class Deferred<T> {
  resolve!: (value: T) => void;
  readonly promise = new Promise<T>((resolve) => (this.resolve = resolve));
}

/** What a call saw of its signal: whether it had aborted when the tool first read it, and why it aborted. */
interface Seen {
  abortedWhenRead: boolean;
  reason: string;
}

/** Per call key: when it started, the gate the test opens, what it saw. */
const started = new Map<string, Deferred<void>>();
const gates = new Map<string, Deferred<void>>();
const seen = new Map<string, Deferred<Seen>>();

function entry<T>(map: Map<string, Deferred<T>>, key: string): Deferred<T> {
  let deferred = map.get(key);
  if (!deferred) map.set(key, (deferred = new Deferred<T>()));
  return deferred;
}

/** Resolves once `signal` aborted, with what the tool saw. */
function watch(signal: AbortSignal): Promise<Seen> {
  const abortedWhenRead = signal.aborted;
  const reasonOf = () => String((signal.reason as Error)?.message ?? signal.reason);
  if (abortedWhenRead) return Promise.resolve({ abortedWhenRead, reason: reasonOf() });
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve({ abortedWhenRead, reason: reasonOf() }), { once: true }),
  );
}

const KEY = { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] };

/**
 * Tools that read `ctx.signal` only once the test lets them: the signal is made on that first
 * read, so when the abort came before it, the tool gets a signal already aborted, with the reason.
 */
@Injectable()
class LateSignalTools {
  @McpTool({ description: 'Reads ctx.signal once its gate opens, then waits for it to abort', input: KEY })
  async late_signal({ key }: { key: string }, ctx: McpToolContext): Promise<string> {
    entry(started, key).resolve();
    await entry(gates, key).promise;
    const result = await watch(ctx.signal);
    entry(seen, key).resolve(result);
    return `aborted: ${result.reason}`;
  }

  @McpTool({
    description: 'Echoes its text without looking at its context',
    input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  })
  plain_echo({ text }: { text: string }): string {
    return text;
  }

  @McpTool({ description: 'Reads the signal of a spread copy of its context', input: KEY })
  async spread_signal({ key }: { key: string }, ctx: McpToolContext): Promise<string> {
    const copy = { ...ctx };
    entry(started, key).resolve();
    await entry(gates, key).promise;
    const result = await watch(copy.signal);
    entry(seen, key).resolve(result);
    return `aborted: ${result.reason}`;
  }
}

/** POSTs `body` with node:http (fetch makes AbortControllers of its own) and resolves with the answer's text. */
function nodePost(url: string, body: unknown, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: {
          Authorization: 'Bearer token-alice',
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve(text));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** Runs `work` with a global AbortController that counts the instances made meanwhile. */
async function countingAbortControllers<T>(work: () => Promise<T>): Promise<{ made: number; result: T }> {
  const Original = globalThis.AbortController;
  let made = 0;
  globalThis.AbortController = class extends Original {
    constructor() {
      super();
      made++;
    }
  };
  try {
    const result = await work();
    return { made, result };
  } finally {
    globalThis.AbortController = Original;
  }
}

/**
 * What aborts a running call's `ctx.signal` over HTTP, when the tool reads the signal only after
 * the abort arrived (no signal existed yet) or through a spread copy of its context: the client's
 * `notifications/cancelled` and the client closing the request, on a 2025 session and on the
 * stateless revision. (Aborts seen by tools that read the signal at once: sse-streams,
 * stateless-edges, shutdown-drain, session-cleanup.)
 */
describe.each(HTTP_ADAPTERS)('ctx.signal of a call, made on first read (%s)', (adapter) => {
  let db: TestDatabase;
  let app: RunningApp;
  let url: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startApp(
      db.url,
      {
        imports: [McpModule.forRoot({ auth: fixtureAuth, providers: [LateSignalTools] })],
        providers: [LateSignalTools],
      },
      adapter,
    );
    url = `${app.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  /** Sends `body` with `headers`, to be closed by the client through `controller`. */
  function closable(body: unknown, headers: Record<string, string>, controller: AbortController): Promise<string> {
    return fetch(url, {
      method: 'POST',
      headers: {
        Authorization: 'Bearer token-alice',
        'Content-Type': 'application/json',
        Accept: 'application/json',
        ...headers,
      },
      body: JSON.stringify(body),
      signal: controller.signal,
    }).then(
      () => 'answered',
      (error: Error) => error.name,
    );
  }

  it('a plain tools/call on a warm session makes no AbortController (its client accepts SSE, nothing reads a signal)', async () => {
    const { sessionId } = await openSession(url);
    const headers = { 'Mcp-Session-Id': sessionId, ...versionHeader() };
    const call = (id: string) => nodePost(url, callRequest(id, 'plain_echo', { text: `echo ${id}` }), headers);
    await call(`${adapter}-warm-up`);
    const { made, result } = await countingAbortControllers(() => call(`${adapter}-plain`));
    expect(JSON.parse(result)).toMatchObject({
      id: `${adapter}-plain`,
      result: { content: [{ type: 'text', text: `echo ${adapter}-plain` }] },
    });
    expect(made).toBe(0);
  });

  it('a session call cancelled before the tool reads ctx.signal gets it already aborted, with the reason', async () => {
    const key = `${adapter}-cancelled-early`;
    const { sessionId } = await openSession(url);
    const call = post(url, callRequest(key, 'late_signal', { key }), { sessionId, headers: versionHeader() });
    await entry(started, key).promise;
    const cancelled = await post(
      url,
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: key, reason: 'no longer needed' } },
      { sessionId, headers: versionHeader() },
    );
    expect(cancelled.status).toBe(202);
    entry(gates, key).resolve();
    await expect(entry(seen, key).promise).resolves.toEqual({ abortedWhenRead: true, reason: 'no longer needed' });
    const reply = await call;
    expect(reply.status).toBe(200);
  });

  it('a spread copy of the context keeps a signal that notifications/cancelled aborts', async () => {
    const key = `${adapter}-spread`;
    const { sessionId } = await openSession(url);
    const call = post(url, callRequest(key, 'spread_signal', { key }), { sessionId, headers: versionHeader() });
    await entry(started, key).promise;
    entry(gates, key).resolve();
    await post(
      url,
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: key, reason: 'stop the copy' } },
      { sessionId, headers: versionHeader() },
    );
    await expect(entry(seen, key).promise).resolves.toMatchObject({ reason: 'stop the copy' });
    expect((await call).status).toBe(200);
  });

  it('a session call answered as plain JSON is aborted when the client closes the request', async () => {
    const key = `${adapter}-closed-json`;
    const { sessionId } = await openSession(url);
    const controller = new AbortController();
    const pending = closable(
      callRequest(key, 'late_signal', { key }),
      { 'Mcp-Session-Id': sessionId, ...versionHeader() },
      controller,
    );
    await entry(started, key).promise;
    controller.abort();
    expect(await pending).toBe('AbortError');
    entry(gates, key).resolve();
    await expect(entry(seen, key).promise).resolves.toMatchObject({ reason: 'The client closed the connection' });
  });

  it('a stateless call is aborted when the client closes the request', async () => {
    const key = `${adapter}-closed-stateless`;
    const controller = new AbortController();
    const body = statelessRequest(key, 'tools/call', { name: 'late_signal', arguments: { key } });
    const pending = closable(body, routingHeaders(body), controller);
    await entry(started, key).promise;
    controller.abort();
    expect(await pending).toBe('AbortError');
    entry(gates, key).resolve();
    await expect(entry(seen, key).promise).resolves.toMatchObject({
      reason: 'The client closed the response stream',
    });
  });
});
