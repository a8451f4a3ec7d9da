import { McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { PagingTools } from '../fixtures/paging-tools';
import { HTTP_ADAPTERS, startApp, type RunningApp } from '../support/http-app';
import {
  callRequest,
  initializeRequest,
  openSession,
  post,
  send,
  TEST_PROTOCOL_VERSION,
  versionHeader,
  wireView,
  type WireReply,
} from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { waitUntilPast } from '../support/polling';

/**
 * The Streamable HTTP endpoint on the wire: every status a client can meet, the JSON-RPC bodies
 * that go with them, and the rows a conversation leaves in PostgreSQL.
 */
describe.each(HTTP_ADAPTERS)('MCP endpoint on the wire (Streamable HTTP, PostgreSQL, %s)', (adapter) => {
  let db: TestDatabase;
  let server: RunningApp;
  let url: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(
      db.url,
      {
        imports: [McpModule.forRoot({ auth: fixtureAuth, advanced: { pageSize: 2 } })],
        providers: [FixtureTools, PagingTools],
      },
      adapter,
    );
    url = `${server.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  async function eventCount(): Promise<number> {
    const [row] = await db.dataSource.query(`SELECT count(*)::int AS n FROM mcp_events`);
    return row.n;
  }

  function expectRpcError(reply: WireReply, status: number, code: number): void {
    expect({ status: reply.status, code: reply.json?.error?.code }).toEqual({ status, code });
    expect(reply.json.jsonrpc).toBe('2.0');
    expect(typeof reply.json.error.message).toBe('string');
  }

  function expectEmpty202(reply: WireReply): void {
    expect(reply.status).toBe(202);
    expect(reply.text).toBe('');
  }

  describe('401 Unauthorized', () => {
    const cases: [string, Record<string, string | null>, string | null][] = [
      ['no Authorization header', {}, null],
      ['a wrong bearer token', {}, 'token-mallory'],
      ['a non-Bearer scheme', { Authorization: 'Basic dG9rZW4tYWxpY2U6' }, null],
      ['the right token under another scheme', { Authorization: 'Token token-alice' }, null],
    ];

    it.each(cases)(
      'POST with %s gets 401, an empty body and WWW-Authenticate: Bearer',
      async (_name, headers, token) => {
        const before = await eventCount();
        const reply = await post(url, initializeRequest(), { token, headers });
        expect(reply.status).toBe(401);
        expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
        expect(reply.text).toBe('');
        expect(await eventCount()).toBe(before);
      },
    );

    it('DELETE with a wrong token gets 401 and the session lives on', async () => {
      const { sessionId } = await openSession(url);
      const reply = await send(url, 'DELETE', { token: 'token-mallory', sessionId });
      expect(reply.status).toBe(401);
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
      expect(reply.text).toBe('');
      const ping = await post(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { sessionId, headers: versionHeader() });
      expect(ping.status).toBe(200);
      expect(ping.json).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    });
  });

  describe('405 Method Not Allowed (before authentication)', () => {
    it.each(['GET', 'PUT', 'PATCH'])('%s without any token gets 405 with Allow: GET, POST, DELETE', async (method) => {
      const reply = await send(
        url,
        method,
        { token: null },
        method === 'GET' ? undefined : JSON.stringify(initializeRequest()),
      );
      expect(reply.status).toBe(405);
      const allowed = (reply.headers.get('allow') ?? '').split(',').map((m) => m.trim().toUpperCase());
      expect(allowed).toEqual(expect.arrayContaining(['GET', 'POST', 'DELETE']));
      if (method !== 'GET') expect(allowed).not.toContain(method);
    });

    it('GET with a valid token and a live session but without Accept: text/event-stream still gets 405 and leaves no row', async () => {
      const { sessionId } = await openSession(url);
      const before = await eventCount();
      const reply = await send(url, 'GET', { sessionId, headers: { Accept: 'application/json' } });
      expect(reply.status).toBe(405);
      expect(reply.headers.get('allow')).toMatch(/POST/);
      expect(await eventCount()).toBe(before);
    });
  });

  describe('400 Bad Request', () => {
    it('a non-initialize request without Mcp-Session-Id', async () => {
      const reply = await post(url, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(reply.status).toBe(400);
      expect(reply.json).toMatchObject({
        jsonrpc: '2.0',
        error: { code: expect.any(Number), message: expect.stringMatching(/Mcp-Session-Id/i) },
      });
    });

    it('invalid JSON gets a JSON-RPC parse error (-32700) with id null', async () => {
      const reply = await post(url, '{"jsonrpc":"2.0","id":1,"method":');
      expectRpcError(reply, 400, -32700);
      expect(reply.json.id).toBeNull();
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it('a JSON-RPC batch (array) gets -32600', async () => {
      const { sessionId } = await openSession(url);
      const reply = await post(
        url,
        [
          { jsonrpc: '2.0', id: 1, method: 'ping' },
          { jsonrpc: '2.0', id: 2, method: 'ping' },
        ],
        { sessionId, headers: versionHeader() },
      );
      expectRpcError(reply, 400, -32600);
    });

    it('a JSON object that is not JSON-RPC gets -32600', async () => {
      const reply = await post(url, { hello: 'world' });
      expectRpcError(reply, 400, -32600);
      const noVersion = await post(url, { id: 1, method: 'ping' });
      expectRpcError(noVersion, 400, -32600);
    });

    it('an unsupported MCP-Protocol-Version header', async () => {
      const { sessionId } = await openSession(url);
      const before = await eventCount();
      const reply = await post(
        url,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { sessionId, headers: { 'MCP-Protocol-Version': '1999-01-01' } },
      );
      expect(reply.status).toBe(400);
      expect(reply.json).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringContaining('1999-01-01') } });
      expect(await eventCount()).toBe(before);
      const supported = await post(
        url,
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { sessionId, headers: versionHeader() },
      );
      expect(supported.status).toBe(200);
    });
  });

  describe('403 Forbidden (Origin)', () => {
    it('refuses a foreign browser origin with 403 and opens no session', async () => {
      const [{ n: sessionsBefore }] = await db.dataSource.query(`SELECT count(*)::int AS n FROM mcp_inbound_sessions`);
      const reply = await post(url, initializeRequest(), { headers: { Origin: 'http://evil.example' } });
      expect(reply.status).toBe(403);
      expect(reply.headers.get('mcp-session-id')).toBeNull();
      const [{ n: sessionsAfter }] = await db.dataSource.query(`SELECT count(*)::int AS n FROM mcp_inbound_sessions`);
      expect(sessionsAfter).toBe(sessionsBefore);
    });

    it('refuses a foreign origin on a live session too', async () => {
      const { sessionId } = await openSession(url);
      const reply = await post(url, callRequest(1, 'echo', { text: 'x' }), {
        sessionId,
        headers: { ...versionHeader(), Origin: 'http://evil.example' },
      });
      expect(reply.status).toBe(403);
    });

    it('accepts a localhost origin', async () => {
      const reply = await post(url, initializeRequest(), { headers: { Origin: 'http://localhost:1234' } });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('mcp-session-id')).toBeTruthy();
      expect(reply.json.result.protocolVersion).toBe(TEST_PROTOCOL_VERSION);
    });
  });

  describe('CORS (app.enableCors) in front of the Origin check', () => {
    let cors: RunningApp;
    let corsUrl: string;
    const origin = 'http://localhost:5173';

    beforeAll(async () => {
      cors = await startApp(
        db.url,
        {
          imports: [McpModule.forRoot({ auth: fixtureAuth, mount: 'cors', path: '/cors/mcp' })],
          providers: [FixtureTools],
        },
        adapter,
        (app) => app.enableCors({ origin, exposedHeaders: ['Mcp-Session-Id'] }),
      );
      corsUrl = `${cors.baseUrl}/cors/mcp`;
    });

    afterAll(async () => {
      await cors?.close();
    });

    it('answers the preflight of an allowed origin before authentication', async () => {
      const reply = await send(corsUrl, 'OPTIONS', {
        token: null,
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization,content-type,mcp-session-id',
        },
      });
      expect(reply.status).toBe(204);
      expect(reply.headers.get('access-control-allow-origin')).toBe(origin);
      expect((reply.headers.get('access-control-allow-methods') ?? '').toUpperCase()).toContain('POST');
    });

    it('lets the browser read the JSON answer and the Mcp-Session-Id of an initialize', async () => {
      const reply = await post(corsUrl, initializeRequest(), { headers: { Origin: origin } });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('access-control-allow-origin')).toBe(origin);
      expect(reply.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id/i);
      expect(reply.headers.get('mcp-session-id')).toEqual(expect.any(String));
    });

    it('a foreign origin is not granted by CORS and gets the 403 of the Origin check', async () => {
      const reply = await post(corsUrl, initializeRequest(), { headers: { Origin: 'https://evil.example' } });
      expectRpcError(reply, 403, -32000);
      expect(reply.headers.get('access-control-allow-origin')).toBe(origin);
    });
  });

  describe('404 Not Found (session)', () => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

    it('an unknown session id', async () => {
      const reply = await post(url, list, { sessionId: 'no-such-session-0123456789abcdef', headers: versionHeader() });
      expect(reply.status).toBe(404);
      expect(reply.json).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    });

    it('a terminated session', async () => {
      const { sessionId } = await openSession(url);
      expect((await send(url, 'DELETE', { sessionId })).status).toBe(204);
      expect((await post(url, list, { sessionId, headers: versionHeader() })).status).toBe(404);
    });

    it("another principal's session (bob using alice's id) and it stays alive for alice", async () => {
      const { sessionId } = await openSession(url, 'token-alice');
      const before = await eventCount();
      const asBob = await post(url, callRequest(1, 'whoami'), {
        token: 'token-bob',
        sessionId,
        headers: versionHeader(),
      });
      const deleteAsBob = await send(url, 'DELETE', { token: 'token-bob', sessionId });
      expect(await eventCount()).toBe(before);
      // Exactly the reply to an id that does not exist: nothing tells bob the session is real.
      const unknownId = 'no-such-session-0123456789abcdef';
      const unknown = await post(url, callRequest(1, 'whoami'), {
        token: 'token-bob',
        sessionId: unknownId,
        headers: versionHeader(),
      });
      const deleteUnknown = await send(url, 'DELETE', { token: 'token-bob', sessionId: unknownId });
      expect(wireView(asBob)).toMatchObject({
        status: 404,
        sessionId: null,
        contentType: expect.stringContaining('application/json'),
      });
      expect(wireView(asBob)).toEqual(wireView(unknown));
      expect(deleteAsBob.status).toBe(404);
      expect(wireView(deleteAsBob)).toEqual(wireView(deleteUnknown));
      const asAlice = await post(url, callRequest(2, 'whoami'), {
        token: 'token-alice',
        sessionId,
        headers: versionHeader(),
      });
      expect(asAlice.status).toBe(200);
      expect(asAlice.json.result.structuredContent).toEqual({ principal: 'alice' });
    });

    it('a session idle past the TTL', async () => {
      const { sessionId } = await openSession(url);
      expect((await post(url, list, { sessionId, headers: versionHeader() })).status).toBe(200);
      const backdatedAt = Date.now();
      await db.dataSource.query(
        `UPDATE mcp_inbound_sessions SET last_seen_at = TIMESTAMP '2000-01-01 00:00:00' WHERE session_id = $1`,
        [sessionId],
      );
      // The replica serves the session it just read from memory for the cache TTL (1 s by
      // default); once that passed, the database's last_seen_at decides.
      await waitUntilPast(backdatedAt, 1000);
      const before = await eventCount();
      expect((await post(url, list, { sessionId, headers: versionHeader() })).status).toBe(404);
      expect(await eventCount()).toBe(before);
    });
  });

  describe('406, 415, 413', () => {
    it('406 when Accept does not admit JSON (text/html)', async () => {
      const reply = await post(url, initializeRequest(), { headers: { Accept: 'text/html' } });
      expect(reply.status).toBe(406);
      expect(reply.headers.get('mcp-session-id')).toBeNull();
    });

    it('415 when Content-Type is text/plain', async () => {
      const reply = await post(url, initializeRequest(), { headers: { 'Content-Type': 'text/plain' } });
      expect(reply.status).toBe(415);
      expect(reply.headers.get('mcp-session-id')).toBeNull();
    });

    it('accepts a 200 KB body under the default 4 MiB limit (above Express’s 100 KB JSON default)', async () => {
      const { sessionId } = await openSession(url);
      const text = 'x'.repeat(200 * 1024);
      const reply = await post(url, callRequest(1, 'echo', { text }), { sessionId, headers: versionHeader() });
      expect(reply.status).toBe(200);
      expect(reply.json.result.content).toEqual([{ type: 'text', text }]);
    });

    it('accepts a 2 MiB body under the default 4 MiB limit (above Fastify’s 1 MiB bodyLimit default)', async () => {
      const { sessionId } = await openSession(url);
      const text = 'y'.repeat(2 * 1024 * 1024);
      const reply = await post(url, callRequest(1, 'echo', { text }), { sessionId, headers: versionHeader() });
      expect(reply.status).toBe(200);
      expect(reply.json.result.content).toEqual([{ type: 'text', text }]);
    });

    it('answers 413 (a JSON-RPC error) to a body over the default 4 MiB limit', async () => {
      const { sessionId } = await openSession(url);
      const before = await eventCount();
      const reply = await post(url, callRequest(1, 'echo', { text: 'x'.repeat(4 * 1024 * 1024 + 1) }), {
        sessionId,
        headers: versionHeader(),
      });
      expect(reply.status).toBe(413);
      expect(reply.json).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
      expect(await eventCount()).toBe(before);
    });

    describe('with maxBodyBytes: 1024 (a second mount, own app, same database)', () => {
      let small: RunningApp;
      let smallUrl: string;

      beforeAll(async () => {
        small = await startApp(
          db.url,
          {
            imports: [
              McpModule.forRoot({
                auth: fixtureAuth,
                advanced: { maxBodyBytes: 1024 },
                mount: 'small',
                path: '/small/mcp',
              }),
            ],
            providers: [FixtureTools],
          },
          adapter,
        );
        smallUrl = `${small.baseUrl}/small/mcp`;
      });

      afterAll(async () => {
        await small?.close();
      });

      it('answers 413 to a 2 KB body and leaves no row', async () => {
        const { sessionId } = await openSession(smallUrl);
        const before = await eventCount();
        const reply = await post(smallUrl, callRequest(1, 'echo', { text: 'y'.repeat(2048) }), {
          sessionId,
          headers: versionHeader(),
        });
        expect(reply.status).toBe(413);
        expect(reply.json).toMatchObject({
          jsonrpc: '2.0',
          error: { code: expect.any(Number), message: expect.stringContaining('1024') },
        });
        expect(await eventCount()).toBe(before);
        const fits = await post(smallUrl, callRequest(2, 'echo', { text: 'y'.repeat(512) }), {
          sessionId,
          headers: versionHeader(),
        });
        expect(fits.status).toBe(200);
        expect(fits.json.result.content).toEqual([{ type: 'text', text: 'y'.repeat(512) }]);
      });

      it('answers 413 to a 2 KB body sent chunked (no Content-Length)', async () => {
        const { sessionId } = await openSession(smallUrl);
        const before = await eventCount();
        const bytes = new TextEncoder().encode(JSON.stringify(callRequest(1, 'echo', { text: 'z'.repeat(2048) })));
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            for (let i = 0; i < bytes.length; i += 256) controller.enqueue(bytes.slice(i, i + 256));
            controller.close();
          },
        });
        const response = await fetch(smallUrl, {
          method: 'POST',
          headers: {
            Authorization: 'Bearer token-alice',
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            'Mcp-Session-Id': sessionId,
            ...versionHeader(),
          },
          body,
          duplex: 'half',
        });
        const reply = { status: response.status, json: await response.json().catch(() => undefined) };
        expect(reply).toEqual({
          status: 413,
          json: expect.objectContaining({
            jsonrpc: '2.0',
            error: expect.objectContaining({ code: expect.any(Number) }),
          }),
        });
        expect(await eventCount()).toBe(before);
      });

      it('answers 404 to a session of another mount, exactly like an unknown id', async () => {
        const { sessionId } = await openSession(url);
        const reply = await post(
          smallUrl,
          { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          { sessionId, headers: versionHeader() },
        );
        const unknown = await post(
          smallUrl,
          { jsonrpc: '2.0', id: 1, method: 'tools/list' },
          { sessionId: 'no-such-session-0123456789abcdef', headers: versionHeader() },
        );
        expect(reply.status).toBe(404);
        expect(wireView(reply)).toEqual(wireView(unknown));
      });
    });
  });

  describe('202 Accepted and 200 OK', () => {
    let sessionId: string;

    beforeAll(async () => {
      ({ sessionId } = await openSession(url));
    });

    function rpc(body: unknown) {
      return post(url, body, { sessionId, headers: versionHeader() });
    }

    it('notifications/initialized gets 202 with an empty body', async () => {
      const opened = await openSession(url);
      expectEmpty202(opened.initialized);
    });

    it('a client JSON-RPC response object gets 202 with an empty body', async () => {
      expectEmpty202(await rpc({ jsonrpc: '2.0', id: 'server-request-1', result: {} }));
      expectEmpty202(await rpc({ jsonrpc: '2.0', id: 'server-request-2', error: { code: -32601, message: 'no' } }));
    });

    it('a request with a JSON body gets 200 and a JSON-RPC response with its id', async () => {
      const reply = await rpc({ jsonrpc: '2.0', id: 'abc', method: 'ping' });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(reply.json).toEqual({ jsonrpc: '2.0', id: 'abc', result: {} });
    });

    it('an unknown method gets -32601', async () => {
      const reply = await rpc({ jsonrpc: '2.0', id: 7, method: 'no/such-method' });
      expect(reply.status).toBe(200);
      expect(reply.json).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32601 } });
    });

    it('an unknown tool gets -32602', async () => {
      const reply = await rpc(callRequest(8, 'no_such_tool'));
      expect(reply.status).toBe(200);
      expect(reply.json).toMatchObject({
        jsonrpc: '2.0',
        id: 8,
        error: { code: -32602, message: expect.stringContaining('no_such_tool') },
      });
    });

    it('invalid arguments give a result with isError true naming the problem', async () => {
      const reply = await rpc(callRequest(9, 'echo', { text: 42 }));
      expect(reply.status).toBe(200);
      expect(reply.json.error).toBeUndefined();
      expect(reply.json.result.isError).toBe(true);
      const message = reply.json.result.content.map((c: { text?: string }) => c.text ?? '').join(' ');
      expect(message).toMatch(/text/);
      expect(message).toMatch(/string/i);

      const missing = await rpc(callRequest(10, 'echo', {}));
      expect(missing.json.result.isError).toBe(true);
      expect(missing.json.result.content.map((c: { text?: string }) => c.text ?? '').join(' ')).toMatch(/text/);
    });

    it('tools/list pages by pageSize, nextCursor leads to the end, and every tool is listed once', async () => {
      const pages: string[][] = [];
      let cursor: string | undefined;
      let id = 100;
      do {
        const reply = await rpc({
          jsonrpc: '2.0',
          id: id++,
          method: 'tools/list',
          ...(cursor === undefined ? {} : { params: { cursor } }),
        });
        expect(reply.status).toBe(200);
        pages.push(reply.json.result.tools.map((t: { name: string }) => t.name));
        cursor = reply.json.result.nextCursor;
        expect(pages.length).toBeLessThanOrEqual(10);
      } while (cursor !== undefined);
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
      expect(pages.flat().sort()).toEqual(['echo', 'extra_one', 'extra_two', 'fail', 'whoami']);
    });

    it('tools/list with an invalid cursor gets -32602', async () => {
      for (const cursor of ['not-a-cursor', Buffer.from(JSON.stringify({ p: 99 })).toString('base64url')]) {
        const reply = await rpc({ jsonrpc: '2.0', id: 'c', method: 'tools/list', params: { cursor } });
        expect(reply.status).toBe(200);
        expect(reply.json).toMatchObject({ jsonrpc: '2.0', id: 'c', error: { code: -32602 } });
      }
    });
  });

  describe('the rows a conversation leaves', () => {
    it('one event row per exchange that reached the session, none for refused ones, terminated_at after DELETE', async () => {
      const before = await eventCount();
      const opened = await openSession(url, 'token-alice', 'rows-client');
      const sessionId = opened.sessionId;
      const h = { sessionId, headers: versionHeader() };

      const [session] = await db.dataSource.query(`SELECT * FROM mcp_inbound_sessions WHERE session_id = $1`, [
        sessionId,
      ]);
      expect(session).toMatchObject({
        mount: 'default',
        principal_key: 'alice',
        principal_label: 'alice',
        protocol_version: TEST_PROTOCOL_VERSION,
        terminated_at: null,
      });
      expect(session.client_info).toEqual({ name: 'rows-client', version: '1.0.0' });

      // What reached the session: [message sent, reply received].
      const exchanges: { sent: unknown; reply: WireReply }[] = [
        { sent: initializeRequest('init-1', 'rows-client'), reply: opened.initialize },
        { sent: { jsonrpc: '2.0', method: 'notifications/initialized' }, reply: opened.initialized },
      ];
      const run = async (sent: unknown) => {
        const reply = await post(url, sent, h);
        exchanges.push({ sent, reply });
        return reply;
      };
      expect((await run({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(200);
      expect((await run(callRequest(2, 'echo', { text: 'recorded' }))).json.result.content).toEqual([
        { type: 'text', text: 'recorded' },
      ]);
      expect((await run(callRequest(3, 'fail'))).json.result.isError).toBe(true);
      expect((await run(callRequest(4, 'echo', { text: 7 }))).json.result.isError).toBe(true);
      expect((await run(callRequest(5, 'no_such_tool'))).json.error.code).toBe(-32602);
      expect(
        (await run({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99, reason: 'test' } }))
          .status,
      ).toBe(202);
      expect((await run({ jsonrpc: '2.0', id: 'srv-1', result: {} })).status).toBe(202);

      // Refused before reaching the session: none of these may leave a row.
      const refusedBefore = await eventCount();
      const refused = [
        await post(url, callRequest(20, 'echo', { text: 'x' }), { ...h, token: null }),
        await post(url, callRequest(21, 'echo', { text: 'x' }), { ...h, token: 'token-mallory' }),
        await send(url, 'GET', h),
        await send(url, 'PUT', h, '{}'),
        await post(url, callRequest(22, 'echo', { text: 'x' }), { headers: versionHeader() }),
        await post(url, '{not json', h),
        await post(url, [callRequest(23, 'echo', { text: 'x' })], h),
        await post(url, callRequest(24, 'echo', { text: 'x' }), {
          sessionId,
          headers: { 'MCP-Protocol-Version': '1999-01-01' },
        }),
        await post(url, callRequest(25, 'echo', { text: 'x' }), { ...h, token: 'token-bob' }),
        await post(url, callRequest(26, 'echo', { text: 'x' }), {
          ...h,
          headers: { ...versionHeader(), Accept: 'text/html' },
        }),
        await post(url, callRequest(27, 'echo', { text: 'x' }), {
          ...h,
          headers: { ...versionHeader(), 'Content-Type': 'text/plain' },
        }),
        await post(url, callRequest(28, 'echo', { text: 'x' }), {
          ...h,
          headers: { ...versionHeader(), Origin: 'http://evil.example' },
        }),
      ];
      expect(refused.map((r) => r.status)).toEqual([401, 401, 405, 405, 400, 400, 400, 400, 404, 406, 415, 403]);
      expect(await eventCount()).toBe(refusedBefore);

      const deleted = await send(url, 'DELETE', h);
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      const [ended] = await db.dataSource.query(
        `SELECT terminated_at, created_at FROM mcp_inbound_sessions WHERE session_id = $1`,
        [sessionId],
      );
      expect(ended.terminated_at).toBeInstanceOf(Date);
      expect(ended.terminated_at.getTime()).toBeGreaterThanOrEqual(ended.created_at.getTime());

      const afterDelete = await eventCount();
      expect((await send(url, 'DELETE', h)).status).toBe(404);
      expect((await post(url, callRequest(30, 'echo', { text: 'late' }), h)).status).toBe(404);
      expect(await eventCount()).toBe(afterDelete);

      // Exactly one row per exchange that reached the session, and nothing else was written.
      expect(await eventCount()).toBe(before + exchanges.length + 1);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire JSON read by the assertions
      const rows: Record<string, any>[] = await db.dataSource.query(`SELECT * FROM mcp_events WHERE session_ref = $1`, [
        session.id,
      ]);
      expect(rows).toHaveLength(exchanges.length + 1);
      for (const row of rows) {
        expect(row).toMatchObject({
          direction: 'inbound',
          mount: 'default',
          principal_key: 'alice',
          session_ref: session.id,
          protocol_version: TEST_PROTOCOL_VERSION,
        });
        expect(Number.isInteger(row.duration_ms) && row.duration_ms >= 0).toBe(true);
        expect(row.created_at).toBeInstanceOf(Date);
      }

      const jsonRows = rows.filter((row) => row.request !== null);
      const recorded = jsonRows.map((row) => ({
        method: row.method,
        request: row.request,
        response: row.response,
        status: row.status,
        is_error: row.is_error,
      }));
      const expected = exchanges.map(({ sent, reply }) => {
        const message = sent as { method?: string; params?: { name?: string } };
        return {
          method: message.method ?? null,
          request: sent,
          response: reply.json ?? null,
          status: reply.status,
          is_error: reply.json?.result?.isError === true,
        };
      });
      const key = (r: { request: unknown }) => JSON.stringify(r.request);
      expect([...recorded].sort((a, b) => key(a).localeCompare(key(b)))).toEqual(
        [...expected].sort((a, b) => key(a).localeCompare(key(b))),
      );
      expect(
        recorded
          .filter((r) => r.is_error)
          .map((r) => (r.request as { id: number }).id)
          .sort(),
      ).toEqual([3, 4]);
      expect(rows.find((row) => row.method === 'tools/call' && row.request.id === 5)?.error_code).toBe(-32602);

      const terminate = rows.filter((row) => row.request === null);
      expect(terminate).toHaveLength(1);
      expect(terminate[0]).toMatchObject({ status: 204, response: null });
    });

    it('stores no bearer token anywhere', async () => {
      // This test's own traffic, so the tables hold rows whichever tests ran before.
      const sessionIds: string[] = [];
      for (const token of ['token-alice', 'token-bob']) {
        const { sessionId } = await openSession(url, token);
        sessionIds.push(sessionId);
        expect((await post(url, callRequest(1, 'whoami'), { token, sessionId, headers: versionHeader() })).status).toBe(
          200,
        );
      }
      expect(
        (await post(url, callRequest(1, 'whoami'), { token: 'token-mallory', headers: versionHeader() })).status,
      ).toBe(401);
      const own = await db.dataSource.query(
        `SELECT s.session_id, count(e.id)::int AS calls FROM mcp_inbound_sessions s JOIN mcp_events e ON e.session_ref = s.id AND e.method = 'tools/call'
          WHERE s.session_id = ANY($1) GROUP BY s.session_id`,
        [sessionIds],
      );
      expect(own).toHaveLength(2);
      expect(own.map((row: { calls: number }) => row.calls)).toEqual([1, 1]);
      for (const table of ['mcp_inbound_sessions', 'mcp_events', 'mcp_outbound_sessions']) {
        const rows: { line: string }[] = await db.dataSource.query(
          `SELECT row_to_json(t)::text AS line FROM ${table} t`,
        );
        const dump = rows.map((r) => r.line).join('\n');
        for (const token of ['token-alice', 'token-bob', 'token-mallory']) expect(dump).not.toContain(token);
        expect(dump).not.toMatch(/Bearer /);
      }
    });
  });
});
