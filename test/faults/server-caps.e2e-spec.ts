import { McpModule } from '../../src/mcp';
import { McpStreamRegistry } from '../../src/mcp/server/sessions/mcp-stream-registry';
import { McpListenStreams } from '../../src/mcp/server/stateless/listen-stream-registry';
import { FeatureResources } from '../fixtures/features/feature-providers';
import { SseReader } from '../fixtures/sse/sse-reader';
import { AbortProbe, SseTools } from '../fixtures/sse/sse-tools';
import { routingHeaders, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startApp, type RunningApp } from '../support/http-app';
import { MCP_ACCEPT, initializeRequest, openSession, post, send, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** Every token `tok-<name>` is the principal `<name>`: each case gets principals of its own. */
const auth = (token: string) => (token.startsWith('tok-') ? token.slice(4) : null);

const limits = {
  sessionsPerPrincipal: 2,
  streamsPerPrincipal: 1,
  listenStreamsPerPrincipal: 1,
  subscriptionsPerSession: 2,
  listenResourceSubscriptions: 2,
  listenTaskIds: 2,
};

/** Polls `check` until it holds, failing after a deadline. */
async function until(check: () => boolean, what: string, deadlineMs = 5_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * The caps of `limits`: live sessions per principal (counted in the database, so two replicas
 * share the count), GET and listen streams per principal (per process), resource subscriptions
 * per session. Each exceeded cap answers 429 (or a JSON-RPC error for resources/subscribe) naming
 * the limit; freeing one lets the next request through.
 */
describe('per-principal caps', () => {
  let db: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;

  const boot = () =>
    startApp(db.url, {
      imports: [McpModule.forRoot({ auth, advanced: { limits, streams: { resumeFollowers: 1 } } })],
      providers: [FeatureResources, SseTools],
    });

  /**
   * Starts a call that reports one progress step and then runs until its POST stream is closed;
   * resolves with that stream and the id of its first event, from which a GET may resume it.
   */
  async function callInFlight(
    token: string,
    sessionId: string,
    key: string,
  ): Promise<{ post: SseReader; eventId: string }> {
    const response = await fetch(`${a.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        Accept: MCP_ACCEPT,
        'Mcp-Session-Id': sessionId,
        ...versionHeader(),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: key,
        method: 'tools/call',
        params: { name: 'wait_for_abort', arguments: { key, announce: true }, _meta: { progressToken: key } },
      }),
    });
    const post = new SseReader(response);
    let event = await post.next();
    while (event && !event.data) event = await post.next(); // the priming event
    expect(JSON.parse(event!.data).method).toBe('notifications/progress');
    await AbortProbe.whenStarted(key);
    return { post, eventId: event!.id! };
  }

  const resumeHeaders = (token: string, sessionId: string, lastEventId?: string) => ({
    Authorization: `Bearer ${token}`,
    Accept: 'text/event-stream',
    'Mcp-Session-Id': sessionId,
    ...versionHeader(),
    ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}),
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await boot();
    b = await boot();
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it('refuses a third live session of a principal with 429 on either replica; DELETE frees a slot; other principals are not affected', async () => {
    const first = await openSession(`${a.baseUrl}/mcp`, 'tok-sess');
    await openSession(`${b.baseUrl}/mcp`, 'tok-sess');
    for (const replica of [a, b]) {
      const refused = await post(`${replica.baseUrl}/mcp`, initializeRequest('init-3'), { token: 'tok-sess' });
      expect(refused.status).toBe(429);
      expect(refused.json).toEqual({
        jsonrpc: '2.0',
        id: 'init-3',
        error: {
          code: -32000,
          message: expect.stringContaining('Too many open sessions'),
          data: { limit: 'sessionsPerPrincipal', max: 2 },
        },
      });
      expect(refused.headers.get('mcp-session-id')).toBeNull();
    }
    expect((await post(`${a.baseUrl}/mcp`, initializeRequest(), { token: 'tok-other' })).status).toBe(200);
    const rows = await db.dataSource.query(
      `SELECT count(*)::int AS n FROM mcp_inbound_sessions WHERE principal_key = 'sess'`,
    );
    expect(rows).toEqual([{ n: 2 }]);

    expect(
      (
        await send(`${b.baseUrl}/mcp`, 'DELETE', {
          token: 'tok-sess',
          sessionId: first.sessionId,
          headers: versionHeader(),
        })
      ).status,
    ).toBe(204);
    expect((await post(`${b.baseUrl}/mcp`, initializeRequest('init-4'), { token: 'tok-sess' })).status).toBe(200);
  });

  it('refuses a second GET stream of a principal on the same process with 429, and accepts it once the first closed', async () => {
    const one = await openSession(`${a.baseUrl}/mcp`, 'tok-get');
    const two = await openSession(`${a.baseUrl}/mcp`, 'tok-get');
    const headers = (sessionId: string) => ({
      Authorization: 'Bearer tok-get',
      Accept: 'text/event-stream',
      'Mcp-Session-Id': sessionId,
      ...versionHeader(),
    });
    const registry = a.app.get(McpStreamRegistry, { strict: false });
    const first = new SseReader(await fetch(`${a.baseUrl}/mcp`, { headers: headers(one.sessionId) }));
    expect((await first.next())?.data).toBe('');

    const refused = await fetch(`${a.baseUrl}/mcp`, { headers: headers(two.sessionId) });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: unknown }).error).toEqual({
      code: -32000,
      message: expect.stringContaining('GET streams'),
      data: { limit: 'streamsPerPrincipal', max: 1 },
    });

    await first.cancel();
    await until(() => registry.countFor('get') === 0, 'the first stream is gone');
    const second = await fetch(`${a.baseUrl}/mcp`, { headers: headers(two.sessionId) });
    expect(second.status).toBe(200);
    await second.body?.cancel();
  });

  it("counts a resumed POST stream against the principal's streams: the next resumption, or a GET stream, is refused 429 until it closes", async () => {
    const { sessionId } = await openSession(`${a.baseUrl}/mcp`, 'tok-resume');
    const registry = a.app.get(McpStreamRegistry, { strict: false });
    const { post: call, eventId } = await callInFlight('tok-resume', sessionId, 'resume-cap');
    const resumed = new SseReader(
      await fetch(`${a.baseUrl}/mcp`, { headers: resumeHeaders('tok-resume', sessionId, eventId) }),
    );
    expect((await resumed.next())?.data).toBe(''); // priming: the resumption is open and follows the call
    expect(registry.countFor('resume')).toBe(1);

    for (const refused of [
      await fetch(`${a.baseUrl}/mcp`, { headers: resumeHeaders('tok-resume', sessionId, eventId) }),
      await fetch(`${a.baseUrl}/mcp`, { headers: resumeHeaders('tok-resume', sessionId) }),
    ]) {
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: unknown }).error).toEqual({
        code: -32000,
        message: expect.stringContaining('GET streams'),
        data: { limit: 'streamsPerPrincipal', max: 1 },
      });
    }

    await resumed.cancel();
    await until(() => registry.countFor('resume') === 0, 'the resumption is forgotten');
    const again = new SseReader(
      await fetch(`${a.baseUrl}/mcp`, { headers: resumeHeaders('tok-resume', sessionId, eventId) }),
    );
    expect((await again.next())?.data).toBe('');
    await call.cancel(); // the call aborts; its response ends the resumption that follows it
    expect(JSON.parse((await again.rest()).at(-1)!.data)).toMatchObject({
      id: 'resume-cap',
      result: { content: [{ type: 'text', text: expect.stringContaining('aborted') }] },
    });
    await until(() => registry.countFor('resume') === 0, 'every resumption is forgotten');
  });

  it('follows at most streams.resumeFollowers resumptions at once: one beyond gets the replay and ends, so its client comes back later', async () => {
    const registry = a.app.get(McpStreamRegistry, { strict: false });
    const first = await openSession(`${a.baseUrl}/mcp`, 'tok-follow-a');
    const second = await openSession(`${a.baseUrl}/mcp`, 'tok-follow-b');
    const callA = await callInFlight('tok-follow-a', first.sessionId, 'follow-a');
    const callB = await callInFlight('tok-follow-b', second.sessionId, 'follow-b');
    const followed = new SseReader(
      await fetch(`${a.baseUrl}/mcp`, { headers: resumeHeaders('tok-follow-a', first.sessionId, callA.eventId) }),
    );
    expect((await followed.next())?.data).toBe('');
    expect(registry.countFor('follow-a')).toBe(1);

    const beyond = new SseReader(
      await fetch(`${a.baseUrl}/mcp`, { headers: resumeHeaders('tok-follow-b', second.sessionId, callB.eventId) }),
    );
    expect(await beyond.rest()).toEqual([{ id: callB.eventId, retry: expect.any(Number), data: '' }]);

    await followed.cancel();
    await until(() => registry.countFor('follow-a') === 0, 'the followed resumption is forgotten');
    const later = new SseReader(
      await fetch(`${a.baseUrl}/mcp`, { headers: resumeHeaders('tok-follow-b', second.sessionId, callB.eventId) }),
    );
    expect((await later.next())?.data).toBe('');
    await callB.post.cancel();
    expect(JSON.parse((await later.rest()).at(-1)!.data)).toMatchObject({
      id: 'follow-b',
      result: { content: [{ type: 'text', text: expect.stringContaining('aborted') }] },
    });
    await callA.post.cancel();
  }, 20_000);

  it('refuses a second listen stream of a principal with 429 (and an audit row), another principal still listens', async () => {
    const listen = (token: string, id: number) => {
      const body = statelessRequest(id, 'subscriptions/listen', { notifications: { toolsListChanged: true } });
      return fetch(`${a.baseUrl}/mcp`, {
        method: 'POST',
        headers: {
          ...routingHeaders(body),
          'Content-Type': 'application/json',
          Accept: MCP_ACCEPT,
          Authorization: `Bearer ${token}`,
        },
        body: JSON.stringify(body),
      });
    };
    const streams = a.app.get(McpListenStreams, { strict: false });
    const first = new SseReader(await listen('tok-listen', 1));
    expect(JSON.parse((await first.next())!.data).method).toBe('notifications/subscriptions/acknowledged');

    const refused = await listen('tok-listen', 2);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: unknown }).error).toEqual({
      code: -32000,
      message: expect.stringContaining('listen streams'),
      data: { limit: 'listenStreamsPerPrincipal', max: 1 },
    });
    const other = await listen('tok-listener-2', 3);
    expect(other.status).toBe(200);
    await other.body?.cancel();
    await first.cancel();
    await until(
      () => streams.countFor('listen') === 0 && streams.countFor('listener-2') === 0,
      'both listen streams are gone',
    );
    const rows = await db.dataSource.query(
      `SELECT status, error_code FROM mcp_events WHERE principal_key = 'listen' ORDER BY created_at`,
    );
    expect(rows).toEqual([
      { status: 200, error_code: null },
      { status: 429, error_code: -32000 },
    ]);
  });

  it('refuses a listen filter naming more URIs or task ids than its cap as invalid params (-32602 with the limit in data, HTTP 200 like every stateless params error), with an audit row', async () => {
    const listen = (id: number, notifications: Record<string, unknown>) => {
      const body = statelessRequest(id, 'subscriptions/listen', { notifications });
      return fetch(`${a.baseUrl}/mcp`, {
        method: 'POST',
        headers: {
          ...routingHeaders(body),
          'Content-Type': 'application/json',
          Accept: MCP_ACCEPT,
          Authorization: 'Bearer tok-filter',
        },
        body: JSON.stringify(body),
      });
    };
    const uris = await listen(1, { resourceSubscriptions: ['docs://readme', 'images://pixel.png', 'docs://broken'] });
    expect({ status: uris.status, type: uris.headers.get('content-type') }).toEqual({
      status: 200,
      type: expect.stringContaining('application/json'),
    });
    expect(await uris.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32602,
        message: expect.stringContaining('notifications.resourceSubscriptions names 3 entries'),
        data: { limit: 'listenResourceSubscriptions', max: 2 },
      },
    });
    const tasks = await listen(2, { taskIds: ['t-1', 't-2', 't-3'] });
    expect({ status: tasks.status, type: tasks.headers.get('content-type') }).toEqual({
      status: 200,
      type: expect.stringContaining('application/json'),
    });
    expect(await tasks.json()).toEqual({
      jsonrpc: '2.0',
      id: 2,
      error: {
        code: -32602,
        message: expect.stringContaining('notifications.taskIds names 3 entries'),
        data: { limit: 'listenTaskIds', max: 2 },
      },
    });
    // At the cap the stream opens.
    const atCap = new SseReader(await listen(3, { resourceSubscriptions: ['docs://readme', 'images://pixel.png'] }));
    expect(JSON.parse((await atCap.next())!.data).params.notifications).toEqual({
      resourceSubscriptions: ['docs://readme', 'images://pixel.png'],
    });
    await atCap.cancel();
    const rows = await db.dataSource.query(
      `SELECT request->>'id' AS id, status, error_code FROM mcp_events WHERE principal_key = 'filter' ORDER BY created_at`,
    );
    expect(rows).toEqual([
      { id: '1', status: 200, error_code: -32602 },
      { id: '2', status: 200, error_code: -32602 },
      { id: '3', status: 200, error_code: null },
    ]);
  });

  it('refuses a third resource subscription of a session with a JSON-RPC error; re-subscribing a watched URI still works', async () => {
    const { sessionId } = await openSession(`${a.baseUrl}/mcp`, 'tok-subs');
    const subscribe = (id: number, uri: string) =>
      post(
        `${a.baseUrl}/mcp`,
        { jsonrpc: '2.0', id, method: 'resources/subscribe', params: { uri } },
        { token: 'tok-subs', sessionId, headers: versionHeader() },
      );
    expect((await subscribe(1, 'docs://readme')).json).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect((await subscribe(2, 'images://pixel.png')).json).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    const refused = await subscribe(3, 'docs://broken');
    expect(refused.json).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: {
        code: -32000,
        message: expect.stringContaining('Too many resource subscriptions'),
        data: { limit: 'subscriptionsPerSession', max: 2 },
      },
    });
    expect((await subscribe(4, 'docs://readme')).json).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
    const rows = await db.dataSource.query(
      `SELECT uri FROM mcp_resource_subscriptions WHERE session_id = $1 ORDER BY uri`,
      [sessionId],
    );
    expect(rows).toEqual([{ uri: 'docs://readme' }, { uri: 'images://pixel.png' }]);
  });
});
