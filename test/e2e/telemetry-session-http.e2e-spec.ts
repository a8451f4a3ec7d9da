import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { McpModule } from '../../src/mcp';
import { sessionIdAttribute } from '../../src/mcp/telemetry/mcp-spans';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { HTTP_ADAPTERS, startApp, type RunningApp } from '../support/http-app';
import { openSession, send, versionHeader } from '../support/mcp-wire';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { installTestTelemetry, randomTraceparent, type TestTelemetry } from '../support/telemetry';

jest.setTimeout(60_000);

/**
 * A GET (the session's event stream, opened or resumed) and a DELETE (the end of a session) have
 * a SERVER span of their own, under the caller's HTTP `traceparent`, with the session id's digest,
 * the HTTP method and status; a refusal is an error.
 */
describe.each(HTTP_ADAPTERS)('OpenTelemetry: SERVER spans of GET streams and DELETE (%s)', (adapter) => {
  let telemetry: TestTelemetry;
  let db: TestDatabase;
  let app: RunningApp;
  let url: string;
  const streams: AbortController[] = [];

  beforeAll(async () => {
    telemetry = installTestTelemetry();
    db = await createTestDatabase();
    app = await startApp(
      db.url,
      { imports: [McpModule.forRoot({ auth: fixtureAuth })], providers: [FixtureTools] },
      adapter,
    );
    url = `${app.baseUrl}/mcp`;
  });

  afterAll(async () => {
    streams.forEach((stream) => stream.abort());
    await app?.close();
    await db?.drop();
    await telemetry?.shutdown();
  });

  /** The one span `name` of the trace, once it ended. */
  function ended(traceId: string, name: string): Promise<ReadableSpan> {
    return pollUntil(`span ${name} of ${traceId}`, () => {
      const found = telemetry.spans().filter((span) => span.spanContext().traceId === traceId && span.name === name);
      if (found.length > 1) throw new Error(`expected one span "${name}", got ${found.length}`);
      return found[0];
    });
  }

  /** The `mcp.session.id` the POST spans of a session carry (its initialize span's). */
  function postSpanSessionDigest(sessionId: string): unknown {
    const digest = sessionIdAttribute(sessionId);
    const initialize = telemetry
      .spans()
      .find((span) => span.name === 'initialize' && span.attributes['mcp.session.id'] === digest);
    return initialize?.attributes['mcp.session.id'];
  }

  /** Opens a GET stream and leaves it open (closed in afterAll or by the test). */
  async function openStream(
    sessionId: string,
    headers: Record<string, string>,
  ): Promise<{ response: Response; stream: AbortController }> {
    const stream = new AbortController();
    streams.push(stream);
    const response = await fetch(url, {
      signal: stream.signal,
      headers: {
        Authorization: 'Bearer token-alice',
        Accept: 'text/event-stream',
        'Mcp-Session-Id': sessionId,
        ...versionHeader(),
        ...headers,
      },
    });
    return { response, stream };
  }

  it('DELETE of a live session: mcp.session.end under the traceparent header, status 204, and the terminate row carries the trace', async () => {
    const { sessionId } = await openSession(url);
    const caller = randomTraceparent();
    const reply = await send(url, 'DELETE', {
      sessionId,
      headers: { ...versionHeader(), traceparent: caller.traceparent },
    });
    expect(reply.status).toBe(204);

    const span = await ended(caller.traceId, 'mcp.session.end');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.parentSpanContext?.spanId).toBe(caller.spanId);
    expect(span.attributes).toMatchObject({
      'mcp.session.id': sessionIdAttribute(sessionId),
      'http.request.method': 'DELETE',
      'http.response.status_code': 204,
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
    });
    expect(span.attributes['mcp.session.id']).toBe(postSpanSessionDigest(sessionId));
    expect(span.attributes['mcp.session.id']).not.toBe(sessionId);
    expect(span.attributes['error.type']).toBeUndefined();
    expect(span.status.code).toBe(SpanStatusCode.UNSET);

    const rows: { kind: string; trace_id: string | null }[] = await db.dataSource.query(
      `SELECT e.kind, e.trace_id FROM mcp_events e JOIN mcp_inbound_sessions s ON s.id = e.session_ref WHERE s.session_id = $1 AND e.kind = 'terminate'`,
      [sessionId],
    );
    expect(rows).toEqual([{ kind: 'terminate', trace_id: caller.traceId }]);
  });

  it('DELETE of an unknown session id: 404, the span is an error with error.type 404', async () => {
    const caller = randomTraceparent();
    const reply = await send(url, 'DELETE', {
      sessionId: 'no-such-session',
      headers: { ...versionHeader(), traceparent: caller.traceparent },
    });
    expect(reply.status).toBe(404);

    const span = await ended(caller.traceId, 'mcp.session.end');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.parentSpanContext?.spanId).toBe(caller.spanId);
    expect(span.attributes).toMatchObject({
      'mcp.session.id': sessionIdAttribute('no-such-session'),
      'http.request.method': 'DELETE',
      'http.response.status_code': 404,
      'error.type': '404',
    });
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('GET opening the session stream: mcp.stream.open ends once the stream is open, while the stream stays open', async () => {
    const { sessionId } = await openSession(url);
    const caller = randomTraceparent();
    const { response, stream } = await openStream(sessionId, { traceparent: caller.traceparent });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);

    // The span ended although the stream is still open (the 409 below proves the stream is).
    const span = await ended(caller.traceId, 'mcp.stream.open');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.parentSpanContext?.spanId).toBe(caller.spanId);
    expect(span.attributes).toMatchObject({
      'mcp.session.id': sessionIdAttribute(sessionId),
      'http.request.method': 'GET',
      'http.response.status_code': 200,
      'mcp.stream.resumed': false,
      'mcp.stream.kind': 'session',
    });
    expect(span.attributes['mcp.session.id']).toBe(postSpanSessionDigest(sessionId));
    expect(span.attributes['error.type']).toBeUndefined();
    expect(span.status.code).toBe(SpanStatusCode.UNSET);

    // A second GET on the same session is refused (409) because the first is still open: an error span of its own.
    const second = randomTraceparent();
    const refused = await openStream(sessionId, { traceparent: second.traceparent });
    expect(refused.response.status).toBe(409);
    await refused.response.body?.cancel();
    const conflict = await ended(second.traceId, 'mcp.stream.open');
    expect(conflict.attributes).toMatchObject({ 'http.response.status_code': 409, 'error.type': '409' });
    expect(conflict.status.code).toBe(SpanStatusCode.ERROR);

    stream.abort();
    expect((await send(url, 'DELETE', { sessionId, headers: versionHeader() })).status).toBe(204);
  });

  it('GET resuming with Last-Event-ID: mcp.stream.resumed is true', async () => {
    const { sessionId } = await openSession(url);
    const caller = randomTraceparent();
    const { response, stream } = await openStream(sessionId, {
      traceparent: caller.traceparent,
      'Last-Event-ID': 'session_0',
    });
    expect(response.status).toBe(200);

    const span = await ended(caller.traceId, 'mcp.stream.open');
    expect(span.parentSpanContext?.spanId).toBe(caller.spanId);
    expect(span.attributes).toMatchObject({
      'http.response.status_code': 200,
      'mcp.stream.resumed': true,
      'mcp.stream.kind': 'session',
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);

    stream.abort();
    expect((await send(url, 'DELETE', { sessionId, headers: versionHeader() })).status).toBe(204);
  });

  it('GET for an unknown session: 404, the span is an error with error.type 404', async () => {
    const caller = randomTraceparent();
    const { response } = await openStream('no-such-session', { traceparent: caller.traceparent });
    expect(response.status).toBe(404);
    await response.body?.cancel();

    const span = await ended(caller.traceId, 'mcp.stream.open');
    expect(span.kind).toBe(SpanKind.SERVER);
    expect(span.parentSpanContext?.spanId).toBe(caller.spanId);
    expect(span.attributes).toMatchObject({
      'mcp.session.id': sessionIdAttribute('no-such-session'),
      'http.request.method': 'GET',
      'http.response.status_code': 404,
      'mcp.stream.resumed': false,
      'error.type': '404',
    });
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
  });
});
