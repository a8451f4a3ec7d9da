import { randomBytes } from 'node:crypto';
import { McpModule } from '../../src/mcp';
import { McpPendingClientRequests } from '../../src/mcp/server/sessions/mcp-session-channel-pending';
import { McpStreamRegistry } from '../../src/mcp/server/sessions/mcp-stream-registry';
import { McpListenStreams } from '../../src/mcp/server/stateless/listen-stream-registry';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { AbortProbe, SseTools } from '../fixtures/sse/sse-tools';
import { SseReader } from '../fixtures/sse/sse-reader';
import { routingHeaders, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startApp, type RunningApp } from '../support/http-app';
import { MCP_ACCEPT, callRequest, post, send, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { Toolset } from '../../src/mcp/transports';

/** Sessions the suite drives; each runs every kind of exchange once. */
const SESSIONS = 40;

/** Polls `check` until it holds, failing after a deadline. */
async function until(check: () => boolean, what: () => string, deadlineMs = 10_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until the maps are empty: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Every map and timer kept per session or per request empties when its session or request
 * ends, however it ends: a normal answer, an SSE answer, an elicitation answered, a client that
 * disconnects mid-elicitation, a cancellation, a GET stream dropped, a listen stream dropped,
 * a DELETE. Many sessions run all of them; then the sizes of the maps, read through the
 * providers, are back to zero.
 */
describe('per-session and per-request state returns to zero', () => {
  let db: TestDatabase;
  let app: RunningApp;
  let url: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [SseTools],
          advanced: { limits: { sessionsPerPrincipal: SESSIONS * 2 } },
        }),
      ],
      providers: [SseTools],
    });
    url = `${app.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  const postHeaders = (sessionId: string) => ({
    Authorization: 'Bearer token-alice',
    'Content-Type': 'application/json',
    Accept: MCP_ACCEPT,
    'Mcp-Session-Id': sessionId,
    ...versionHeader(),
  });

  async function driveSession(index: number): Promise<void> {
    const init = await post(url, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: { elicitation: {} },
        clientInfo: { name: 'maps', version: '1' },
      },
    });
    const sessionId = init.headers.get('mcp-session-id')!;
    const options = { sessionId, headers: versionHeader() };
    expect((await post(url, callRequest(1, 'progress_steps', { steps: 1 }), options)).status).toBe(200);

    // An elicitation answered by the client.
    const asked = await fetch(url, {
      method: 'POST',
      headers: postHeaders(sessionId),
      body: JSON.stringify(callRequest(2, 'ask_name')),
    });
    const askedStream = new SseReader(asked);
    await askedStream.next(); // priming
    const question = JSON.parse((await askedStream.next())!.data);
    await post(
      url,
      { jsonrpc: '2.0', id: question.id, result: { action: 'accept', content: { name: 'Ada' } } },
      options,
    );
    expect(JSON.parse((await askedStream.next())!.data).result.content[0].text).toBe('hello Ada');

    // An elicitation whose client goes away before answering.
    const dropped = new SseReader(
      await fetch(url, {
        method: 'POST',
        headers: postHeaders(sessionId),
        body: JSON.stringify(callRequest(3, 'ask_name')),
      }),
    );
    await dropped.next();
    await dropped.next();
    await dropped.cancel();

    // A cancelled call.
    const key = `maps-${index}-${randomBytes(3).toString('hex')}`;
    const running = post(url, callRequest(4, 'wait_for_abort', { key }), options);
    await AbortProbe.whenStarted(key);
    await post(url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 4 } }, options);
    expect((await running).status).toBe(200);

    // A GET stream opened and dropped.
    const stream = new SseReader(
      await fetch(url, {
        headers: {
          Authorization: 'Bearer token-alice',
          Accept: 'text/event-stream',
          'Mcp-Session-Id': sessionId,
          ...versionHeader(),
        },
      }),
    );
    await stream.next();
    await stream.cancel();

    // A listen stream opened and dropped (2026-07-28, no session).
    const body = statelessRequest(index, 'subscriptions/listen', { notifications: { toolsListChanged: true } });
    const listen = new SseReader(
      await fetch(url, {
        method: 'POST',
        headers: {
          ...routingHeaders(body),
          'Content-Type': 'application/json',
          Accept: MCP_ACCEPT,
          Authorization: 'Bearer token-alice',
        },
        body: JSON.stringify(body),
      }),
    );
    await listen.next();
    await listen.cancel();

    if (index % 2 === 0) expect((await send(url, 'DELETE', options)).status).toBe(204);
  }

  it(`drives ${SESSIONS} sessions through every kind of ending; every map is empty afterwards`, async () => {
    const toolset = app.app.get(Toolset, { strict: false });
    const pending = app.app.get(McpPendingClientRequests, { strict: false });
    const registry = app.app.get(McpStreamRegistry, { strict: false });
    const listen = app.app.get(McpListenStreams, { strict: false });
    for (let batch = 0; batch < SESSIONS; batch += 8) {
      await Promise.all(Array.from({ length: Math.min(8, SESSIONS - batch) }, (_, i) => driveSession(batch + i)));
    }
    const sizes = () => ({
      inFlight: toolset.inFlightCount,
      pending: pending.size,
      ...registry.sizes,
      listen: listen.size,
      listenPrincipals: listen.principals,
    });
    await until(
      () => Object.values(sizes()).every((size) => size === 0),
      () => JSON.stringify(sizes()),
    );
    expect(sizes()).toEqual({
      inFlight: 0,
      pending: 0,
      streams: 0,
      principals: 0,
      requestSessions: 0,
      listen: 0,
      listenPrincipals: 0,
    });
    const rows = await db.dataSource.query(`SELECT count(*)::int AS n FROM mcp_inbound_sessions`);
    expect(rows).toEqual([{ n: SESSIONS }]);
  });
});
