import type { McpClientOptions, McpClientService } from '../../src/mcp';
import { McpInputRequiredError } from '../../src/mcp/errors';
import { startSdkHttpServer, type SdkHttpServer } from '../fixtures/http/sdk-http-server';
import { startStatelessHttpPeer, type StatelessHttpPeer } from '../fixtures/stateless-peers/stateless-http-server';
import { withClientApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a JavaScript module the stdio peers share, outside the TypeScript project
const { TRICKY_STATE } = require('../fixtures/stateless-peers/stateless-peer-tools') as { TRICKY_STATE: string };

const STATELESS = '2026-07-28';

type Body = { id: unknown; method: string; params: Record<string, unknown> & { _meta: Record<string, unknown> } };

/**
 * The client against official SDK peers over Streamable HTTP: a 2026-07-28 server (SDK 2.x,
 * stateless only and dual-era) and a 2025 server (SDK 1.x), with `version: 'auto'` and pinned.
 */
describe('McpClientService on both revisions over Streamable HTTP', () => {
  let db: TestDatabase;
  let stateless: StatelessHttpPeer;
  /** A second stateless-only peer for the input_required tests, so `stateless` sees only the first test's traffic. */
  let asking: StatelessHttpPeer;
  let dual: StatelessHttpPeer;
  let dualPinned: StatelessHttpPeer;
  let legacy: SdkHttpServer;
  let legacyPinned: SdkHttpServer;
  let options: McpClientOptions;
  const asked: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    stateless = await startStatelessHttpPeer({ legacy: 'reject' });
    asking = await startStatelessHttpPeer({ legacy: 'reject' });
    dual = await startStatelessHttpPeer({ legacy: 'stateless' });
    dualPinned = await startStatelessHttpPeer({ legacy: 'stateless' });
    legacy = await startSdkHttpServer({ enableJsonResponse: true });
    legacyPinned = await startSdkHttpServer({ enableJsonResponse: false });
    options = {
      servers: {
        stateless: { url: stateless.url },
        asking: { url: asking.url },
        dual: { url: dual.url },
        dualPinned: { url: dualPinned.url, version: STATELESS },
        legacy: { url: legacy.url, version: 'auto' },
        legacyPinned: { url: legacyPinned.url, version: '2025-11-25' },
      },
      handlers: {
        elicitation: (params) => {
          asked.push(String(params.message));
          return { action: 'accept', content: { name: 'Ada' } };
        },
      },
      advanced: { maxInputRounds: 3 },
    };
  });

  afterAll(async () => {
    await Promise.all([
      stateless?.close(),
      asking?.close(),
      dual?.close(),
      dualPinned?.close(),
      legacy?.close(),
      legacyPinned?.close(),
    ]);
    await db?.drop();
  });

  const withClient = <T>(use: (client: McpClientService) => Promise<T>): Promise<T> =>
    withClientApp(db.url, options, use);

  const bodies = (peer: StatelessHttpPeer, method: string) =>
    peer.received.filter((r) => r.body?.method === method).map((r) => r.body as unknown as Body);

  it('auto: probes a 2026-07-28 server once, calls it statelessly, and a second app instance reuses the persisted verdict', async () => {
    await withClient(async (client) => {
      expect(await client.callTool('stateless', 'echo', { text: 'hi' })).toEqual({
        content: [{ type: 'text', text: 'hi' }],
      });
    });
    // tools/list first: the call's Mcp-Param-* headers come from the tool's inputSchema.
    expect(stateless.methods()).toEqual(['server/discover', 'tools/list', 'tools/call']);
    const call = stateless.received[2];
    expect(call.headers).toMatchObject({
      'mcp-protocol-version': STATELESS,
      'mcp-method': 'tools/call',
      'mcp-name': 'echo',
    });
    expect(call.headers['mcp-session-id']).toBeUndefined();
    expect(stateless.received[0].headers).toMatchObject({
      'mcp-protocol-version': STATELESS,
      'mcp-method': 'server/discover',
    });
    expect((call.body as unknown as Body).params._meta).toEqual({
      'io.modelcontextprotocol/protocolVersion': STATELESS,
      'io.modelcontextprotocol/clientInfo': { name: 'durable-mcp', version: '0.1.0' },
      'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
    });
    const [row] = await db.dataSource.query(`SELECT * FROM mcp_outbound_sessions WHERE server = 'stateless'`);
    expect(row).toMatchObject({
      protocol_version: STATELESS,
      remote_session_id: null,
      endpoint: `http ${stateless.url}`,
    });
    expect(row.server_info).toEqual({ name: 'stateless-peer', version: '2.0.0' });

    const envelope = await withClient(async (client) => {
      await client.setLogLevel('stateless', 'debug');
      return (await client.callTool('stateless', 'whoami', {})).structuredContent as {
        envelope: Record<string, unknown>;
      };
    });
    expect(envelope.envelope).toMatchObject({
      'io.modelcontextprotocol/protocolVersion': STATELESS,
      'io.modelcontextprotocol/logLevel': 'debug',
      'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
    });
    expect(stateless.methods()).not.toContain('logging/setLevel');
    expect(stateless.methods()).toEqual(['server/discover', 'tools/list', 'tools/call', 'tools/list', 'tools/call']);
    const events = await db.dataSource.query(
      `SELECT method, protocol_version, status FROM mcp_events WHERE server = 'stateless' ORDER BY created_at`,
    );
    expect(events).toEqual([
      { method: 'server/discover', protocol_version: STATELESS, status: 200 },
      { method: 'tools/list', protocol_version: STATELESS, status: 200 },
      { method: 'tools/call', protocol_version: STATELESS, status: 200 },
      { method: 'tools/list', protocol_version: STATELESS, status: 200 },
      { method: 'tools/call', protocol_version: STATELESS, status: 200 },
    ]);
  });

  it('fulfils input_required with the registered elicitation handler and retries with a new id, inputResponses and the exact requestState', async () => {
    const askedBefore = asked.length;
    const result = await withClient((client) => client.callTool('asking', 'ask', {}));
    expect(result).toEqual({ content: [{ type: 'text', text: 'Hello, Ada!' }] });
    expect(asked.slice(askedBefore)).toEqual(['Your name?']);
    const asks = bodies(asking, 'tools/call').filter((b) => b.params.name === 'ask');
    expect(asks).toHaveLength(2);
    const [first, retry] = asks;
    expect(retry.id).not.toEqual(first.id);
    expect(first.params).not.toHaveProperty('inputResponses');
    expect(first.params).not.toHaveProperty('requestState');
    expect(retry.params.inputResponses).toEqual({ who: { action: 'accept', content: { name: 'Ada' } } });
    expect(retry.params.requestState).toBe(TRICKY_STATE);
    expect(asking.runs.filter((name) => name === 'ask')).toHaveLength(2);
  });

  it('bounds the rounds: a server that keeps asking for input fails the call with McpInputRequiredError', async () => {
    await withClient(async (client) => {
      await expect(client.callTool('asking', 'nag', {})).rejects.toBeInstanceOf(McpInputRequiredError);
    });
    const nags = bodies(asking, 'tools/call').filter((b) => b.params.name === 'nag');
    expect(nags).toHaveLength(4);
    expect(nags.slice(1).every((b) => b.params.requestState === 'again')).toBe(true);
    expect(new Set(nags.map((b) => b.id)).size).toBe(4);
  });

  it('auto: picks the stateless revision on a dual-era server; pinned 2026-07-28 never initializes either', async () => {
    await withClient(async (client) => {
      expect(await client.callTool('dual', 'echo', { text: 'both' })).toEqual({
        content: [{ type: 'text', text: 'both' }],
      });
      expect(await client.callTool('dualPinned', 'echo', { text: 'pinned' })).toEqual({
        content: [{ type: 'text', text: 'pinned' }],
      });
    });
    expect(dual.methods()).toEqual(['server/discover', 'tools/list', 'tools/call']);
    expect(dualPinned.methods()).not.toContain('initialize');
    expect(bodies(dualPinned, 'tools/call')[0].params._meta['io.modelcontextprotocol/protocolVersion']).toBe(STATELESS);
  });

  it('auto: falls back to initialize for an SDK 1.x server and persists that verdict; pinned 2025-11-25 never probes', async () => {
    await withClient(async (client) => {
      expect(await client.callTool('legacy', 'echo', { text: 'old' })).toEqual({
        content: [{ type: 'text', text: 'old' }],
      });
      expect(await client.callTool('legacyPinned', 'echo', { text: 'older' })).toEqual({
        content: [{ type: 'text', text: 'older' }],
      });
    });
    const methods = () => legacy.received.filter((r) => r.httpMethod === 'POST').map((r) => String(r.body?.method));
    // The call's own initialize tells the capabilities: no ping exchange before it.
    expect(methods()).toEqual(['server/discover', 'initialize', 'notifications/initialized', 'tools/call']);
    expect(legacyPinned.received.map((r) => r.body?.method)).not.toContain('server/discover');
    const [row] = await db.dataSource.query(`SELECT * FROM mcp_outbound_sessions WHERE server = 'legacy'`);
    expect(row).toMatchObject({ protocol_version: '2025-11-25', endpoint: `http ${legacy.url}` });
    expect(row.remote_session_id).toEqual(expect.any(String));

    await withClient(async (client) => {
      expect(await client.callTool('legacy', 'echo', { text: 'again' })).toEqual({
        content: [{ type: 'text', text: 'again' }],
      });
    });
    expect(methods()).toEqual([
      'server/discover',
      'initialize',
      'notifications/initialized',
      'tools/call',
      'tools/call',
    ]);
    const [probe] = await db.dataSource.query(
      `SELECT status, note FROM mcp_events WHERE server = 'legacy' AND method = 'server/discover'`,
    );
    expect(probe.status).toBe(400);
  });
});
