import { McpClientModule, McpClientService, McpModule } from '../../src/mcp';
import { McpCallNotFoundError, McpConfigurationError, McpTimeoutError } from '../../src/mcp/errors';
import { DocumentedTools } from '../fixtures/documented/documented-tools';
import {
  startDiscoverSwallowingProxy,
  startSilentHttpServer,
  type LoopbackServer,
} from '../fixtures/documented/silent-http-server';
import { FeaturePrompts, FeatureResources } from '../fixtures/features/feature-providers';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startSdkHttpServer, type SdkHttpServer } from '../fixtures/http/sdk-http-server';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

const DEFAULT_TIMEOUT_MS = 700;
const SERVER_TIMEOUT_MS = 500;
const CALL_TIMEOUT_MS = 300;
const PROBE_TIMEOUT_MS = 300;
const GENEROUS_MS = 20_000;

/**
 * The client options of the options reference (docs/reference/options/mcp-client-module.md), each observed on a real peer: this package's own
 * server over HTTP, the official SDK's server, a server that never answers, and a proxy that
 * never answers the `server/discover` probe.
 */
describe('McpClientModule options, observed on real peers', () => {
  let db: TestDatabase;
  let server: RunningApp;
  let clientApp: RunningApp;
  let client: McpClientService;
  let silent: LoopbackServer;
  let proxy: LoopbackServer;
  let sdkHeaders: SdkHttpServer;
  /** The peer of the headers test alone, so that what it receives does not depend on the tests before. */
  let sdkHeadersOnly: SdkHttpServer;
  let sdkOld: SdkHttpServer;

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [DocumentedTools, FixtureTools, FeaturePrompts, FeatureResources],
          stateless: { requestStateSecret: 'client-options-suite-secret-0123' },
        }),
      ],
      providers: [DocumentedTools, FixtureTools, FeaturePrompts, FeatureResources],
    });
    const own = `${server.baseUrl}/mcp`;
    silent = await startSilentHttpServer();
    proxy = await startDiscoverSwallowingProxy(own);
    sdkHeaders = await startSdkHttpServer({ enableJsonResponse: true });
    sdkOld = await startSdkHttpServer({ enableJsonResponse: true });
    sdkHeadersOnly = await startSdkHttpServer({ enableJsonResponse: true });
    clientApp = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          defaultTimeoutMs: DEFAULT_TIMEOUT_MS,
          servers: {
            silentDefault: { url: silent.url, version: '2025-11-25' },
            silentServer: { url: silent.url, version: '2025-11-25', timeoutMs: SERVER_TIMEOUT_MS },
            probed: {
              url: proxy.url,
              bearerToken: 'token-alice',
              probeTimeoutMs: PROBE_TIMEOUT_MS,
              timeoutMs: GENEROUS_MS,
            },
            perUser: {
              url: own,
              bearerToken: 'token-alice',
              scope: 'principal',
              version: '2025-11-25',
              timeoutMs: GENEROUS_MS,
            },
            own: { url: own, bearerToken: 'token-alice', version: '2025-11-25', timeoutMs: GENEROUS_MS },
            ownStateless: { url: own, bearerToken: 'token-alice', version: '2026-07-28', timeoutMs: GENEROUS_MS },
            withHeaders: {
              url: sdkHeaders.url,
              headers: { 'X-Team': 'blue', 'X-Trace-Id': 'trace-42' },
              version: '2025-06-18',
              timeoutMs: GENEROUS_MS,
            },
            oldest: { url: sdkOld.url, version: '2025-03-26', timeoutMs: GENEROUS_MS },
            headersOnly: {
              url: sdkHeadersOnly.url,
              headers: { 'X-Team': 'blue', 'X-Trace-Id': 'trace-42' },
              version: '2025-06-18',
              timeoutMs: GENEROUS_MS,
            },
          },
        }),
      ],
    });
    client = clientApp.app.get(McpClientService);
  });

  afterAll(async () => {
    await clientApp?.close();
    await Promise.all([silent?.close(), proxy?.close(), sdkHeaders?.close(), sdkOld?.close(), sdkHeadersOnly?.close()]);
    await server?.close();
    await db?.drop();
  });

  async function outboundSessions(
    name: string,
  ): Promise<Array<{ scope_key: string; remote_session_id: string | null; protocol_version: string }>> {
    return db.dataSource.query(
      `SELECT scope_key, remote_session_id, protocol_version FROM mcp_outbound_sessions WHERE server = $1 ORDER BY scope_key`,
      [name],
    );
  }

  describe('timeouts (a server that never answers)', () => {
    it('defaultTimeoutMs is the deadline when neither the server nor the call sets one', async () => {
      const call = client.callTool('silentDefault', 'anything', {});
      await expect(call).rejects.toBeInstanceOf(McpTimeoutError);
      await expect(call).rejects.toMatchObject({ timeoutMs: DEFAULT_TIMEOUT_MS });
    });

    it("a server's timeoutMs wins over defaultTimeoutMs", async () => {
      const call = client.callTool('silentServer', 'anything', {});
      await expect(call).rejects.toBeInstanceOf(McpTimeoutError);
      await expect(call).rejects.toMatchObject({ timeoutMs: SERVER_TIMEOUT_MS });
    });

    it("a call's timeoutMs wins over both", async () => {
      const onServer = client.callTool('silentServer', 'anything', {}, { timeoutMs: CALL_TIMEOUT_MS });
      await expect(onServer).rejects.toBeInstanceOf(McpTimeoutError);
      await expect(onServer).rejects.toMatchObject({ timeoutMs: CALL_TIMEOUT_MS });
      const onDefault = client.callTool('silentDefault', 'anything', {}, { timeoutMs: CALL_TIMEOUT_MS });
      await expect(onDefault).rejects.toMatchObject({ name: 'McpTimeoutError', timeoutMs: CALL_TIMEOUT_MS });
    });
  });

  it('probeTimeoutMs: a server that never answers server/discover is taken for a 2025 one and the call succeeds over initialize', async () => {
    const result = await client.callTool('probed', 'echo', { text: 'after the probe' });
    expect(result).toEqual({ content: [{ type: 'text', text: 'after the probe' }] });
    const methods = proxy.seen.map((request) => request.rpcMethod);
    expect(methods.filter((method) => method === 'server/discover')).toHaveLength(1);
    expect(methods.indexOf('initialize')).toBeGreaterThan(methods.indexOf('server/discover'));
    expect(methods).toContain('tools/call');
    const [session] = await outboundSessions('probed');
    expect(session).toMatchObject({
      protocol_version: '2025-11-25',
      remote_session_id: expect.stringMatching(/^[\x21-\x7e]+$/),
    });
  });

  describe("scope: 'principal'", () => {
    it('two scope keys continue two remote sessions, one outbound row each', async () => {
      expect((await client.callTool('perUser', 'echo', { text: 'for u1' }, { scopeKey: 'user-1' })).content).toEqual([
        { type: 'text', text: 'for u1' },
      ]);
      expect((await client.callTool('perUser', 'echo', { text: 'for u2' }, { scopeKey: 'user-2' })).content).toEqual([
        { type: 'text', text: 'for u2' },
      ]);
      expect((await client.callTool('perUser', 'echo', { text: 'u1 again' }, { scopeKey: 'user-1' })).content).toEqual([
        { type: 'text', text: 'u1 again' },
      ]);
      const rows = await outboundSessions('perUser');
      expect(rows.map((row) => row.scope_key)).toEqual(['user-1', 'user-2']);
      expect(rows[0].remote_session_id).not.toBe(rows[1].remote_session_id);
      const inbound = await db.dataSource.query(
        `SELECT session_id FROM mcp_inbound_sessions WHERE session_id = ANY($1)`,
        [rows.map((row) => row.remote_session_id)],
      );
      expect(inbound).toHaveLength(2);
    });

    it('a call without scopeKey fails with McpConfigurationError', async () => {
      await expect(client.callTool('perUser', 'echo', { text: 'nobody' })).rejects.toBeInstanceOf(
        McpConfigurationError,
      );
    });

    it('every other request without scopeKey rejects (never throws) with McpConfigurationError', async () => {
      const attempts: Array<() => Promise<unknown>> = [
        () => client.request('perUser', 'tools/list'),
        () => client.readResource('perUser', 'docs://readme'),
        () => client.getPrompt('perUser', 'greet'),
        () => client.ping('perUser'),
        () => client.listTools('perUser'),
      ];
      for (const attempt of attempts) {
        let returned: Promise<unknown> | undefined;
        expect(() => (returned = attempt())).not.toThrow();
        await expect(returned).rejects.toBeInstanceOf(McpConfigurationError);
      }
    });
  });

  describe("a call's meta", () => {
    it('arrives in the request _meta of a 2025 session', async () => {
      const result = await client.callTool('own', 'show_meta', {}, { meta: { traceId: 'trace-2025', tenant: 'acme' } });
      expect(result.structuredContent).toMatchObject({
        meta: { traceId: 'trace-2025', tenant: 'acme' },
        protocolVersion: '2025-11-25',
      });
    });

    it('arrives in the request _meta on 2026-07-28, beside the envelope', async () => {
      const result = await client.callTool('ownStateless', 'show_meta', {}, { meta: { traceId: 'trace-2026' } });
      expect(result.structuredContent).toMatchObject({
        meta: { traceId: 'trace-2026' },
        protocolVersion: '2026-07-28',
      });
    });
  });

  it('HTTP headers of a server entry are sent on every request', async () => {
    await client.callTool('headersOnly', 'echo', { text: 'with headers' });
    const seen = sdkHeadersOnly.received.map(
      (request) => `${request.httpMethod} ${(request.body as { method?: string } | null)?.method ?? ''}`,
    );
    expect(seen).toEqual(['POST initialize', 'POST notifications/initialized', 'POST tools/call']);
    for (const request of sdkHeadersOnly.received) {
      expect({ team: request.headers['x-team'], trace: request.headers['x-trace-id'] }).toEqual({
        team: 'blue',
        trace: 'trace-42',
      });
    }
  });

  describe('pinned version', () => {
    it.each([
      ['withHeaders', '2025-06-18', () => sdkHeaders],
      ['oldest', '2025-03-26', () => sdkOld],
    ])('%s asks initialize for exactly %s and the outbound session stores it', async (name, version, sdk) => {
      await client.callTool(name, 'echo', { text: version });
      const initialize = sdk().received.filter(
        (request) => (request.body as { method?: string } | null)?.method === 'initialize',
      );
      expect(initialize).toHaveLength(1);
      expect((initialize[0].body as { params: { protocolVersion: string } }).params.protocolVersion).toBe(version);
      const discover = sdk().received.filter(
        (request) => (request.body as { method?: string } | null)?.method === 'server/discover',
      );
      expect(discover).toEqual([]);
      const [session] = await outboundSessions(name);
      expect(session.protocol_version).toBe(version);
    });
  });

  describe("this package's own server through the client API", () => {
    it('servers() names every configured server', () => {
      expect(client.servers().sort()).toEqual([
        'headersOnly',
        'oldest',
        'own',
        'ownStateless',
        'perUser',
        'probed',
        'silentDefault',
        'silentServer',
        'withHeaders',
      ]);
    });

    it.each(['own', 'ownStateless'])('getPrompt on %s fills in the arguments', async (name) => {
      const prompt = await client.getPrompt(name, 'code_review', { code: 'x = 1', language: 'python' });
      expect(prompt.messages).toEqual([
        { role: 'user', content: { type: 'text', text: 'Please review this python:\nx = 1' } },
        { role: 'assistant', content: { type: 'text', text: 'Sure, reading it now.' } },
      ]);
    });

    it.each(['own', 'ownStateless'])(
      'complete on %s runs the prompt argument completers, with context',
      async (name) => {
        const languages = await client.complete(
          name,
          { type: 'ref/prompt', name: 'code_review' },
          { name: 'language', value: 'pyt' },
        );
        expect(languages.completion).toEqual({ values: ['python', 'pytorch'], total: 2, hasMore: false });
        const frameworks = await client.complete(
          name,
          { type: 'ref/prompt', name: 'code_review' },
          { name: 'framework', value: 'f' },
          { arguments: { language: 'python' } },
        );
        expect(frameworks.completion).toEqual({ values: ['flask', 'fastapi'], total: 2, hasMore: false });
      },
    );

    it('request sends any method and resolves to its result', async () => {
      const read = await client.request('own', 'resources/read', { uri: 'docs://readme' });
      expect(read.contents).toEqual([{ uri: 'docs://readme', mimeType: 'text/markdown', text: '# durable-mcp\n' }]);
      const templates = await client.request('own', 'resources/templates/list', {});
      expect(
        (templates.resourceTemplates as Array<{ uriTemplate: string }>).map((template) => template.uriTemplate),
      ).toEqual(['users://{id}/profile']);
    });
  });

  describe('McpCallNotFoundError', () => {
    it('getCallResult and waitForCall with an unknown id reject with McpCallNotFoundError naming the id', async () => {
      await expect(client.getCallResult('no-such-id')).rejects.toBeInstanceOf(McpCallNotFoundError);
      await expect(client.getCallResult('no-such-id')).rejects.toMatchObject({
        callId: 'no-such-id',
        delivered: false,
      });
      await expect(client.waitForCall('no-such-id')).rejects.toBeInstanceOf(McpCallNotFoundError);
    });
  });
});
