import { McpModule } from '../../src/mcp';
import { DocumentedTools } from '../fixtures/documented/documented-tools';
import { FeatureResources } from '../fixtures/features/feature-providers';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { SseReader, messagesOf } from '../fixtures/sse/sse-reader';
import { StatelessTools } from '../fixtures/stateless/stateless-tools';
import { statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { startApp, type RunningApp } from '../support/http-app';
import {
  MCP_ACCEPT,
  TEST_PROTOCOL_VERSION,
  callRequest,
  initializeRequest,
  openSession,
  post,
  versionHeader,
} from '../support/mcp-wire';
import { pollUntil, waitUntilPast } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const CLIENT_REQUEST_TIMEOUT_MS = 400;
const KEEP_ALIVE_MS = 150;
const RETRY_MS = 4321;
const IDLE_TTL_MS = 3000;
const REQUEST_STATE_TTL_MS = 1000;
const SECRET = 'server-options-suite-secret-0123';
const ALLOWED_ORIGIN = 'https://app.example.com';

/**
 * The mount options of the options reference (docs/reference/options/mcp-module.md), each observed from outside: on the wire, in the rows,
 * or in what a tool sees. One mount sets every option to a non-default value; a second mount
 * allows every origin.
 */
describe('McpModule options, observed end to end', () => {
  let db: TestDatabase;
  let app: RunningApp;
  let url: string;
  let anyOriginUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [DocumentedTools, FixtureTools, StatelessTools, FeatureResources],
          advanced: {
            streams: {
              clientRequestTimeoutMs: CLIENT_REQUEST_TIMEOUT_MS,
              keepAliveMs: KEEP_ALIVE_MS,
              retryMs: RETRY_MS,
            },
            cache: { ttlMs: 12_345, scope: 'private', read: { ttlMs: 678, scope: 'public' } },
          },
          sessions: { idleTtlMs: IDLE_TTL_MS },
          allowedOrigins: [ALLOWED_ORIGIN],
          stateless: { requestStateSecret: SECRET, requestStateTtlMs: REQUEST_STATE_TTL_MS },
        }),
        McpModule.forRoot({
          mount: 'any-origin',
          path: '/any/mcp',
          auth: fixtureAuth,
          providers: [FixtureTools],
          allowedOrigins: '*',
        }),
      ],
      providers: [DocumentedTools, FixtureTools, StatelessTools, FeatureResources],
    });
    url = `${app.baseUrl}/mcp`;
    anyOriginUrl = `${app.baseUrl}/any/mcp`;
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  /** Opens a session whose client declares elicitation. */
  async function openElicitingSession(): Promise<string> {
    const init = {
      ...initializeRequest('init-elicit'),
      params: { ...initializeRequest().params, capabilities: { elicitation: {} } },
    };
    const reply = await post(url, init);
    expect(reply.status).toBe(200);
    const sessionId = reply.headers.get('mcp-session-id')!;
    await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { sessionId, headers: versionHeader() });
    return sessionId;
  }

  describe('streams', () => {
    it('clientRequestTimeoutMs: a tool whose elicitation the client never answers sees McpClientRequestTimeoutError with the configured timeoutMs', async () => {
      const sessionId = await openElicitingSession();
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          Authorization: 'Bearer token-alice',
          'Content-Type': 'application/json',
          Accept: MCP_ACCEPT,
          'Mcp-Session-Id': sessionId,
          ...versionHeader(),
        },
        body: JSON.stringify(callRequest('ask-1', 'ask_or_report')),
      });
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const events = await new SseReader(response).rest();
      const messages = messagesOf(events);
      expect(messages.map((m) => m.method ?? 'response')).toEqual(['elicitation/create', 'response']);
      expect(messages[1]).toEqual({
        jsonrpc: '2.0',
        id: 'ask-1',
        result: {
          content: [
            { type: 'text', text: `McpClientRequestTimeoutError elicitation/create ${CLIENT_REQUEST_TIMEOUT_MS}` },
          ],
        },
      });
    });

    it('retryMs: the first event of a POST stream announces the configured retry', async () => {
      const sessionId = await openElicitingSession();
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          Authorization: 'Bearer token-alice',
          'Content-Type': 'application/json',
          Accept: MCP_ACCEPT,
          'Mcp-Session-Id': sessionId,
          ...versionHeader(),
        },
        body: JSON.stringify(callRequest('ask-2', 'ask_or_report')),
      });
      const events = await new SseReader(response).rest();
      expect(events[0].retry).toBe(RETRY_MS);
      expect(events.filter((event) => event.retry !== undefined)).toHaveLength(1);
    });

    it('retryMs and keepAliveMs: a GET stream starts with the configured retry field and then sends keep-alive comment lines', async () => {
      const { sessionId } = await openSession(url);
      const controller = new AbortController();
      const response = await fetch(url, {
        headers: {
          Authorization: 'Bearer token-alice',
          Accept: 'text/event-stream',
          'Mcp-Session-Id': sessionId,
          ...versionHeader(),
        },
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let raw = '';
      try {
        await pollUntil('three keep-alive comments', async () => {
          const { value, done } = await reader.read();
          if (done) throw new Error(`the GET stream ended early: ${raw}`);
          raw += value;
          return (raw.match(/^: ?keep-alive$/gm) ?? []).length >= 3 ? true : undefined;
        });
      } finally {
        controller.abort();
      }
      const lines = raw.split('\n');
      expect(lines.slice(0, 3)).toEqual([expect.stringMatching(/^id: /), `retry: ${RETRY_MS}`, 'data: ']);
      expect(lines.filter((line) => line.startsWith('retry:'))).toEqual([`retry: ${RETRY_MS}`]);
    });
  });

  describe('sessions.idleTtlMs', () => {
    it('a session used within the TTL stays alive past the TTL from its creation (last_seen_at slides)', async () => {
      const openedAt = Date.now();
      const { sessionId } = await openSession(url);
      const statuses: number[] = [];
      while (Date.now() - openedAt < IDLE_TTL_MS + 1500) {
        const reply = await post(url, callRequest(statuses.length + 1, 'echo', { text: 'still here' }), {
          sessionId,
          headers: versionHeader(),
        });
        statuses.push(reply.status);
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      expect(statuses.every((status) => status === 200)).toBe(true);
      const [row] = await db.dataSource.query(
        `SELECT created_at, last_seen_at FROM mcp_inbound_sessions WHERE session_id = $1`,
        [sessionId],
      );
      expect(new Date(row.last_seen_at).getTime() - new Date(row.created_at).getTime()).toBeGreaterThan(IDLE_TTL_MS);
      const after = await post(url, callRequest('last', 'echo', { text: 'past the TTL from creation' }), {
        sessionId,
        headers: versionHeader(),
      });
      expect(after.status).toBe(200);
    });

    it('an unused session answers 404 once the TTL passed', async () => {
      const { sessionId } = await openSession(url);
      const fresh = await post(url, callRequest(1, 'echo', { text: 'fresh' }), { sessionId, headers: versionHeader() });
      expect(fresh.status).toBe(200);
      const usedAt = Date.now();
      await waitUntilPast(usedAt, IDLE_TTL_MS + 1100);
      const stale = await post(url, callRequest(2, 'echo', { text: 'too late' }), {
        sessionId,
        headers: versionHeader(),
      });
      expect(stale.status).toBe(404);
      expect(stale.json.error).toMatchObject({ code: expect.any(Number), message: 'Session not found' });
    });
  });

  describe('allowedOrigins', () => {
    it('a listed origin gets 200, another origin 403 with a JSON-RPC body, and no Origin header passes', async () => {
      const allowed = await post(url, initializeRequest(), { headers: { Origin: ALLOWED_ORIGIN } });
      expect(allowed.status).toBe(200);
      const other = await post(url, initializeRequest(), { headers: { Origin: 'https://other.example.com' } });
      expect(other.status).toBe(403);
      expect(other.json).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: expect.stringContaining('https://other.example.com') },
      });
      const localhost = await post(url, initializeRequest(), { headers: { Origin: 'http://localhost:3000' } });
      expect(localhost.status).toBe(403);
      const none = await post(url, initializeRequest());
      expect(none.status).toBe(200);
    });

    it("'*' allows any origin, and no Origin header", async () => {
      const foreign = await post(anyOriginUrl, initializeRequest(), {
        headers: { Origin: 'https://anything.example.net' },
      });
      expect(foreign.status).toBe(200);
      expect(foreign.headers.get('mcp-session-id')).toBeTruthy();
      const none = await post(anyOriginUrl, initializeRequest());
      expect(none.status).toBe(200);
    });
  });

  describe('stateless (2026-07-28)', () => {
    it('requestStateTtlMs: a requestState older than the TTL is refused with -32602 (expired)', async () => {
      const first = await statelessPost(
        url,
        statelessRequest(1, 'tools/call', { name: 'greet', arguments: {} }, { elicitation: {} }),
      );
      expect(first.json.result.resultType).toBe('input_required');
      const issuedAt = Date.now();
      await waitUntilPast(issuedAt, REQUEST_STATE_TTL_MS + 200);
      const retry = statelessRequest(
        2,
        'tools/call',
        {
          name: 'greet',
          arguments: {},
          requestState: first.json.result.requestState,
          inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'Late' } } },
        },
        { elicitation: {} },
      );
      const reply = await statelessPost(url, retry);
      expect(reply.json.error).toMatchObject({ code: -32602, message: expect.stringMatching(/expired/) });
      expect(reply.json.result).toBeUndefined();
    });

    it('requestStateTtlMs: a retry within the TTL completes', async () => {
      const first = await statelessPost(
        url,
        statelessRequest(3, 'tools/call', { name: 'greet', arguments: {} }, { elicitation: {} }),
      );
      const retry = statelessRequest(
        4,
        'tools/call',
        {
          name: 'greet',
          arguments: {},
          requestState: first.json.result.requestState,
          inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'Ada' } } },
        },
        { elicitation: {} },
      );
      const reply = await statelessPost(url, retry);
      expect(reply.json.result).toMatchObject({
        resultType: 'complete',
        content: [{ type: 'text', text: 'Hello, Ada!' }],
      });
    });

    it('cache: lists carry the configured ttlMs/cacheScope, reads the configured read hints', async () => {
      const list = await statelessPost(url, statelessRequest(5, 'tools/list'));
      expect({ ttlMs: list.json.result.ttlMs, cacheScope: list.json.result.cacheScope }).toEqual({
        ttlMs: 12_345,
        cacheScope: 'private',
      });
      const resources = await statelessPost(url, statelessRequest(6, 'resources/list'));
      expect({ ttlMs: resources.json.result.ttlMs, cacheScope: resources.json.result.cacheScope }).toEqual({
        ttlMs: 12_345,
        cacheScope: 'private',
      });
      const read = await statelessPost(url, statelessRequest(7, 'resources/read', { uri: 'docs://readme' }));
      expect(read.json.result.contents).toEqual([
        { uri: 'docs://readme', mimeType: 'text/markdown', text: '# durable-mcp\n' },
      ]);
      expect({ ttlMs: read.json.result.ttlMs, cacheScope: read.json.result.cacheScope }).toEqual({
        ttlMs: 678,
        cacheScope: 'public',
      });
    });

    it('cache: a mount without the option sends the defaults (lists 60 s public, reads 0 private)', async () => {
      const list = await statelessPost(anyOriginUrl, statelessRequest(8, 'tools/list'));
      expect({ ttlMs: list.json.result.ttlMs, cacheScope: list.json.result.cacheScope }).toEqual({
        ttlMs: 60_000,
        cacheScope: 'public',
      });
    });
  });

  describe('a request without MCP-Protocol-Version on an existing session', () => {
    it('is served (200), not refused like an unsupported version (400)', async () => {
      const { sessionId } = await openSession(url);
      const reply = await post(url, callRequest('no-version', 'echo', { text: 'no header' }), { sessionId });
      expect(reply.status).toBe(200);
      expect(reply.json.result).toEqual({ content: [{ type: 'text', text: 'no header' }] });
      const unsupported = await post(url, callRequest('bad-version', 'echo', { text: 'x' }), {
        sessionId,
        headers: { 'MCP-Protocol-Version': '1999-01-01' },
      });
      expect(unsupported.status).toBe(400);
    });

    // The specification's 2025-03-26 fallback is for a server with "no other way to identify the
    // version"; a session has one, the revision negotiated at initialize.
    it('is handled as the revision negotiated at initialize (the tool and the event row see it)', async () => {
      const opened = await post(url, {
        ...initializeRequest('init-0618'),
        params: { ...initializeRequest().params, protocolVersion: '2025-06-18' },
      });
      const sessionId = opened.headers.get('mcp-session-id') as string;
      expect(opened.json.result.protocolVersion).toBe('2025-06-18');
      const reply = await post(url, callRequest('meta-no-version', 'show_meta'), { sessionId });
      expect(reply.json.result.structuredContent.protocolVersion).toBe('2025-06-18');
      const rows = await db.dataSource.query(
        `SELECT e.protocol_version FROM mcp_events e JOIN mcp_inbound_sessions s ON s.id = e.session_ref WHERE s.session_id = $1 AND e.method = 'tools/call'`,
        [sessionId],
      );
      expect(rows).toEqual([{ protocol_version: '2025-06-18' }]);
    });

    it('with the header, the negotiated revision is the one the tool and the event row see', async () => {
      const { sessionId } = await openSession(url);
      const reply = await post(url, callRequest('meta-version', 'show_meta'), { sessionId, headers: versionHeader() });
      expect(reply.json.result.structuredContent.protocolVersion).toBe(TEST_PROTOCOL_VERSION);
      const rows = await db.dataSource.query(
        `SELECT e.protocol_version FROM mcp_events e JOIN mcp_inbound_sessions s ON s.id = e.session_ref WHERE s.session_id = $1 AND e.method = 'tools/call'`,
        [sessionId],
      );
      expect(rows).toEqual([{ protocol_version: TEST_PROTOCOL_VERSION }]);
    });
  });
});
