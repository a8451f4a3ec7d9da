import { McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { STATELESS, envelope, statelessPost, statelessRequest } from '../fixtures/stateless/stateless-wire';
import { StatelessTools } from '../fixtures/stateless/stateless-tools';
import { HTTP_ADAPTERS, startApp, type RunningApp } from '../support/http-app';
import { callRequest, openSession, post, send, versionHeader, type WireReply } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * The 2026-07-28 revision on the same endpoint as the session revisions: every status and
 * JSON-RPC code a stateless client can meet, and the audit rows it leaves in PostgreSQL.
 */
describe.each(HTTP_ADAPTERS)('Stateless requests (2026-07-28) on the wire (%s)', (adapter) => {
  let db: TestDatabase;
  let server: RunningApp;
  let url: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(
      db.url,
      {
        imports: [
          McpModule.forRoot({
            auth: fixtureAuth,
            server: { name: 'wire-server', version: '9.9.9', instructions: 'Use echo.' },
          }),
        ],
        providers: [FixtureTools, StatelessTools],
      },
      adapter,
    );
    url = `${server.baseUrl}/mcp`;
  });

  afterAll(async () => {
    await server?.close();
    await db?.drop();
  });

  function expectRpcError(reply: WireReply, status: number, code: number, id: number | string | null): void {
    expect({ status: reply.status, code: reply.json?.error?.code, id: reply.json?.id }).toEqual({ status, code, id });
    expect(typeof reply.json.error.message).toBe('string');
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire JSON read by the assertions
  async function rowsFor(id: number): Promise<any[]> {
    return db.dataSource.query(
      `SELECT session_ref, protocol_version, principal_key, method, status, error_code, kind FROM mcp_events WHERE request->>'id' = $1 ORDER BY created_at`,
      [String(id)],
    );
  }

  describe('served statelessly', () => {
    it('server/discover lists every revision, the capabilities, identity, instructions and cache hints', async () => {
      const reply = await statelessPost(url, statelessRequest(1, 'server/discover'));
      expect(reply.status).toBe(200);
      expect(reply.headers.get('mcp-session-id')).toBeNull();
      expect(reply.json.result).toMatchObject({
        resultType: 'complete',
        supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
        capabilities: { tools: expect.any(Object) },
        instructions: 'Use echo.',
        ttlMs: 60_000,
        cacheScope: 'public',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'wire-server', version: '9.9.9' } },
      });
    });

    it('tools/list and tools/call answer with resultType, list cache hints, and leave session-less rows', async () => {
      const list = await statelessPost(url, statelessRequest(1001, 'tools/list'));
      expect(list.status).toBe(200);
      expect(list.json.result).toMatchObject({ resultType: 'complete', ttlMs: 60_000, cacheScope: 'public' });
      expect(list.json.result.tools.map((tool: { name: string }) => tool.name)).toEqual(
        expect.arrayContaining(['echo', 'greet']),
      );
      const call = await statelessPost(
        url,
        statelessRequest(1002, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }),
      );
      expect(call.status).toBe(200);
      expect(call.json.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'hi' }] });
      expect(call.json.result.ttlMs).toBeUndefined();
      const whoami = await statelessPost(url, statelessRequest(1003, 'tools/call', { name: 'whoami' }), {
        token: 'token-bob',
      });
      expect(whoami.json.result.structuredContent).toEqual({ principal: 'bob' });
      expect(await rowsFor(1002)).toEqual([
        {
          session_ref: null,
          protocol_version: STATELESS,
          principal_key: 'alice',
          method: 'tools/call',
          status: 200,
          error_code: null,
          kind: 'request',
        },
      ]);
      expect((await rowsFor(1003))[0]).toMatchObject({ principal_key: 'bob', session_ref: null });
    });

    it('a failing tool is an isError result, marked complete', async () => {
      const reply = await statelessPost(url, statelessRequest(3, 'tools/call', { name: 'fail' }));
      expect(reply.status).toBe(200);
      expect(reply.json.result).toMatchObject({ resultType: 'complete', isError: true });
    });

    it('decodes a Base64 sentinel Mcp-Name before comparing it', async () => {
      const body = statelessRequest(4, 'tools/call', { name: 'echo', arguments: { text: 'b64' } });
      const reply = await statelessPost(url, body, {
        headers: { 'Mcp-Name': `=?base64?${Buffer.from('echo').toString('base64')}?=` },
      });
      expect(reply.status).toBe(200);
      expect(reply.json.result.content[0].text).toBe('b64');
    });

    it('a notification is accepted with 202 and an empty body', async () => {
      const reply = await statelessPost(url, {
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 1, _meta: envelope() },
      } as never);
      expect(reply.status).toBe(202);
      expect(reply.text).toBe('');
    });

    it('the Bearer guard still runs first (401, no row)', async () => {
      const reply = await statelessPost(url, statelessRequest(5, 'tools/list'), { token: null });
      expect(reply.status).toBe(401);
      expect(await rowsFor(5)).toEqual([]);
    });
  });

  describe('refusals', () => {
    it('-32602 / 400 for a missing or malformed envelope, with the request id', async () => {
      expectRpcError(
        await statelessPost(url, { jsonrpc: '2.0', id: 11, method: 'server/discover', params: {} } as never),
        400,
        -32602,
        11,
      );
      const noCaps = {
        jsonrpc: '2.0',
        id: 12,
        method: 'server/discover',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': STATELESS } },
      };
      expectRpcError(await statelessPost(url, noCaps), 400, -32602, 12);
      const badLevel = statelessRequest(13, 'tools/list', { _meta: { 'io.modelcontextprotocol/logLevel': 'loud' } });
      expectRpcError(await statelessPost(url, badLevel), 400, -32602, 13);
    });

    it('-32022 / 400 with the supported versions for an unsupported revision', async () => {
      const body = statelessRequest(21, 'server/discover', {
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
      });
      const reply = await statelessPost(url, body, { headers: { 'MCP-Protocol-Version': '2099-01-01' } });
      expectRpcError(reply, 400, -32022, 21);
      expect(reply.json.error.data).toEqual({
        supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
        requested: '2099-01-01',
      });
      expect((await rowsFor(21))[0]).toMatchObject({
        protocol_version: '2099-01-01',
        status: 400,
        error_code: -32022,
        session_ref: null,
      });
    });

    it.each([
      ['MCP-Protocol-Version differs from the envelope', { 'MCP-Protocol-Version': '2025-11-25' }],
      ['MCP-Protocol-Version missing', { 'MCP-Protocol-Version': null }],
      ['Mcp-Method differs from the body', { 'Mcp-Method': 'tools/list' }],
      ['Mcp-Method differs in case only', { 'Mcp-Method': 'TOOLS/CALL' }],
      ['Mcp-Method missing', { 'Mcp-Method': null }],
      ['Mcp-Name differs from the body', { 'Mcp-Name': 'fail' }],
      ['Mcp-Name missing on tools/call', { 'Mcp-Name': null }],
      ['Mcp-Name is a malformed Base64 sentinel', { 'Mcp-Name': '=?base64?***?=' }],
    ])('-32020 / 400 when %s', async (_case, headers) => {
      const reply = await statelessPost(
        url,
        statelessRequest(31, 'tools/call', { name: 'echo', arguments: { text: 'x' } }),
        { headers },
      );
      expectRpcError(reply, 400, -32020, 31);
    });

    it('accepts header names in any case and whitespace around values', async () => {
      const reply = await statelessPost(
        url,
        statelessRequest(32, 'tools/call', { name: 'echo', arguments: { text: 'ws' } }),
        {
          headers: { 'Mcp-Method': null, 'Mcp-Name': null, 'MCP-METHOD': ' tools/call ', 'mcp-name': '  echo  ' },
        },
      );
      expect(reply.status).toBe(200);
    });

    it('-32601 / 404 for unknown and session-only methods', async () => {
      for (const method of ['no/such-method', 'initialize', 'ping', 'logging/setLevel', 'resources/subscribe']) {
        expectRpcError(await statelessPost(url, statelessRequest(41, method)), 404, -32601, 41);
      }
    });

    it('-32021 / 400 with requiredCapabilities when a tool needs an undeclared client capability', async () => {
      const reply = await statelessPost(
        url,
        statelessRequest(51, 'tools/call', { name: 'ask_model' }, { elicitation: {} }),
      );
      expectRpcError(reply, 400, -32021, 51);
      expect(reply.json.error.data).toEqual({ requiredCapabilities: { sampling: {} } });
      expect((await rowsFor(51))[0]).toMatchObject({ status: 400, error_code: -32021 });
    });

    it('GET and DELETE speaking 2026-07-28 get 405', async () => {
      expect(
        (await send(url, 'GET', { headers: { 'MCP-Protocol-Version': STATELESS, Accept: 'text/event-stream' } }))
          .status,
      ).toBe(405);
      const del = await send(url, 'DELETE', { headers: { 'MCP-Protocol-Version': STATELESS } });
      expect(del.status).toBe(405);
      expect(del.headers.get('allow')).toBe('POST');
    });
  });

  describe('the session path on the same endpoint', () => {
    it('initialize and a session call still work next to stateless traffic', async () => {
      const { sessionId } = await openSession(url);
      const reply = await post(url, callRequest(61, 'echo', { text: 'legacy' }), {
        sessionId,
        headers: versionHeader(),
      });
      expect(reply.status).toBe(200);
      expect(reply.json.result.content[0].text).toBe('legacy');
      expect(reply.json.result.resultType).toBeUndefined();
    });
  });
});
