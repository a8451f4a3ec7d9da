import { Client as Sdk2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as Sdk2StdioTransport } from '@modelcontextprotocol/client/stdio';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpClientModule, McpClientService } from '../../src/mcp';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import {
  childEnv,
  RawStdioPeer,
  rows,
  stdioFixtureCommand,
  text,
  type Row,
} from '../fixtures/stdio-serve/stdio-serve-kit';

jest.setTimeout(180_000);

const STATELESS = '2026-07-28';
const META = 'io.modelcontextprotocol';

/** The `_meta` envelope of a 2026-07-28 request. */
function envelope(capabilities: Record<string, unknown> = {}): Record<string, unknown> {
  return { [`${META}/protocolVersion`]: STATELESS, [`${META}/clientCapabilities`]: capabilities };
}

/**
 * An app served with serveMcpOverStdio, spoken to on the 2026-07-28 revision: requests carry
 * their revision in `_meta` and are served without a session, like stateless requests over HTTP
 * (the same answers, `input_required` rounds for elicitation, sampling and roots, audit rows
 * without a session). Clients: the official SDK 2.x client's stdio transport (pinned and auto),
 * durable-mcp's own client spawning the app per call, and raw lines.
 */
describe('serveMcpOverStdio on the 2026-07-28 revision', () => {
  const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-stdio-stateless-'));
  const peers: RawStdioPeer[] = [];
  const closers: (() => Promise<void>)[] = [];

  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
    for (const peer of peers) await peer.kill();
    rmSync(workdir, { recursive: true, force: true });
  });

  // The cases of each group share nothing but the host app's client (each spawns its own
  // processes, with their own SQLite files): they run side by side, a process booting (about
  // 1.5 s of CPU) while another is served.
  describe('the official SDK 2.x client (@modelcontextprotocol/client/stdio)', () => {
    it.concurrent.each<[string, 'auto' | { pin: string }]>([
      ['pinned to 2026-07-28', { pin: STATELESS }],
      ['in auto negotiation', 'auto'],
    ])(
      '%s: speaks the stateless revision, lists and calls tools, answers elicitation, sampling and roots through input_required rounds',
      async (name, mode) => {
        const db = join(workdir, `sdk2-${name.split(' ')[0]}.sqlite`);
        const { command, args, env } = stdioFixtureCommand(db);
        const transport = new Sdk2StdioTransport({ command, args, env: childEnv(env), stderr: 'pipe' });
        const client = new Sdk2Client(
          { name: 'sdk2-stdio-stateless-e2e', version: '2.0.0' },
          { capabilities: { elicitation: {}, sampling: {}, roots: {} }, versionNegotiation: { mode } },
        );
        const asked: string[] = [];
        client.setRequestHandler('elicitation/create', async (request) => {
          asked.push(String(request.params.message));
          return { action: 'accept', content: { name: 'Grace' } };
        });
        client.setRequestHandler('sampling/createMessage', async () => ({
          role: 'assistant',
          content: { type: 'text', text: 'hi from the model' },
          model: 'test-model',
          stopReason: 'endTurn',
        }));
        client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
        await client.connect(transport);
        closers.push(() => client.close());
        expect(client.getNegotiatedProtocolVersion()).toBe(STATELESS);
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'ask', 'consult', 'whoami']));
        expect(text(await client.callTool({ name: 'echo', arguments: { text: 'stateless' } }))).toBe('stateless');
        expect(text(await client.callTool({ name: 'ask', arguments: {} }))).toBe('hello Grace');
        expect(asked).toEqual(['What is your name?']);
        expect(text(await client.callTool({ name: 'consult', arguments: {} }))).toBe(
          'model: hi from the model; roots: file:///work',
        );
        // No session: the tool sees none, and the principal is the configured one.
        expect(text(await client.callTool({ name: 'whoami', arguments: {} }))).toBe('local/Local user on null');
        const progress: number[] = [];
        expect(
          text(
            await client.callTool({ name: 'count', arguments: {} }, { onprogress: (p) => progress.push(p.progress) }),
          ),
        ).toBe('counted to 3');
        expect(progress).toEqual([1, 2, 3]);
        await client.close();

        expect(await rows(db, 'SELECT count(*) AS n FROM mcp_inbound_sessions')).toEqual([{ n: 0 }]);
        const calls = await rows(
          db,
          "SELECT principal_key, protocol_version, session_ref, status, json_extract(response, '$.result.resultType') AS result_type FROM mcp_events WHERE method = 'tools/call' ORDER BY created_at, id",
        );
        expect(new Set(calls.map((row) => row.principal_key))).toEqual(new Set(['local']));
        expect(new Set(calls.map((row) => row.protocol_version))).toEqual(new Set([STATELESS]));
        expect(new Set(calls.map((row) => row.session_ref))).toEqual(new Set([null]));
        expect(new Set(calls.map((row) => row.status))).toEqual(new Set([200]));
        const resultTypes = calls.map((row) => row.result_type);
        // echo; ask: one round, then the retry; consult: sampling, then roots, then the retry; whoami; count.
        expect(resultTypes).toEqual([
          'complete',
          'input_required',
          'complete',
          'input_required',
          'input_required',
          'complete',
          'complete',
          'complete',
        ]);
      },
    );
  });

  describe("durable-mcp's own client spawning the app per call", () => {
    let pg: TestDatabase;
    let host: RunningApp;
    let client: McpClientService;
    const pinnedDb = join(workdir, 'client-pinned.sqlite');
    const autoDb = join(workdir, 'client-auto.sqlite');

    beforeAll(async () => {
      pg = await createTestDatabase();
      const entry = (db: string) => {
        const { command, args, env } = stdioFixtureCommand(db);
        return { command: [command, ...args], env: childEnv(env), timeoutMs: 60_000 };
      };
      host = await startApp(pg.url, {
        imports: [
          McpClientModule.forRoot({
            servers: { pinned: { ...entry(pinnedDb), version: STATELESS }, auto: entry(autoDb) },
            handlers: { elicitation: () => ({ action: 'accept', content: { name: 'Ada' } }) },
          }),
        ],
      });
      closers.push(async () => {
        await host.close();
        await pg.drop();
      });
      client = host.app.get(McpClientService);
    });

    const outbound = (server: string): Promise<Row[]> =>
      pg.dataSource.query(
        `SELECT method, protocol_version, response FROM mcp_events WHERE server = $1 AND direction = 'outbound' ORDER BY created_at`,
        [server],
      );

    it.concurrent('pinned to 2026-07-28: no initialize, a tool that elicits answered across processes', async () => {
      expect(text(await client.callTool('pinned', 'echo', { text: 'per call' }))).toBe('per call');
      expect(text(await client.callTool('pinned', 'ask', {}))).toBe('hello Ada');
      const sent = await outbound('pinned');
      expect(sent.map((row) => row.method)).toEqual(['server/discover', 'tools/call', 'tools/call', 'tools/call']);
      expect(new Set(sent.map((row) => row.protocol_version))).toEqual(new Set([STATELESS]));
      // Each process wrote the row of the request it served, none opened a session.
      expect(await rows(pinnedDb, 'SELECT count(*) AS n FROM mcp_inbound_sessions')).toEqual([{ n: 0 }]);
      expect(
        await rows(pinnedDb, "SELECT protocol_version, status FROM mcp_events WHERE method = 'tools/call'"),
      ).toEqual([
        { protocol_version: STATELESS, status: 200 },
        { protocol_version: STATELESS, status: 200 },
        { protocol_version: STATELESS, status: 200 },
      ]);
    });

    it.concurrent('auto: the server/discover probe finds the stateless revision, and the calls follow it', async () => {
      expect(text(await client.callTool('auto', 'ask', {}))).toBe('hello Ada');
      const sent = await outbound('auto');
      expect(sent.map((row) => row.method)).toEqual(['server/discover', 'tools/call', 'tools/call']);
      expect(new Set(sent.map((row) => row.protocol_version))).toEqual(new Set([STATELESS]));
      expect((sent[0].response as { result: { supportedVersions: string[] } }).result.supportedVersions[0]).toBe(
        STATELESS,
      );
      expect(await rows(autoDb, 'SELECT count(*) AS n FROM mcp_inbound_sessions')).toEqual([{ n: 0 }]);
    });
  });

  describe('raw lines on stdin', () => {
    /** The app spawned on its own SQLite file under `name`, spoken to line by line (killed after the suite). */
    function raw(name: string): { peer: RawStdioPeer; db: string } {
      const db = join(workdir, `${name}.sqlite`);
      const { command, args, env } = stdioFixtureCommand(db);
      const peer = new RawStdioPeer(command, args, env);
      peers.push(peer);
      return { peer, db };
    }

    it.concurrent(
      'serves a 2026-07-28 request and a 2025 session side by side, and cancels a stateless request without answering it',
      async () => {
        const { peer, db } = raw('raw');
        peer.send({
          jsonrpc: '2.0',
          id: 's1',
          method: 'tools/call',
          params: { name: 'echo', arguments: { text: 'a' }, _meta: envelope() },
        });
        expect(await peer.answer('s1')).toMatchObject({ result: { content: [{ text: 'a' }], resultType: 'complete' } });
        await peer.initialize();
        peer.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } });
        expect(text((await peer.answer(1)).result)).toMatch(/^local\/Local user on \S+$/);
        peer.send({
          jsonrpc: '2.0',
          id: 's2',
          method: 'tools/call',
          params: { name: 'until_cancelled', arguments: {}, _meta: { ...envelope(), progressToken: 'run' } },
        });
        await peer.next((frame) => (frame.params as { progressToken?: string } | undefined)?.progressToken === 'run');
        peer.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 's2', reason: 'user' } });
        peer.send({
          jsonrpc: '2.0',
          id: 's3',
          method: 'tools/call',
          params: { name: 'echo', arguments: { text: 'b' }, _meta: envelope() },
        });
        await peer.answer('s3');
        peer.child.stdin.end();
        expect(await peer.exited).toEqual({ code: 0, signal: null });
        expect(peer.frames.filter((frame) => frame.id === 's2')).toEqual([]);
        const events = await rows(
          db,
          "SELECT method, protocol_version, session_ref IS NULL AS stateless, status FROM mcp_events WHERE direction = 'inbound' AND method IN ('tools/call', 'notifications/cancelled') ORDER BY created_at, id",
        );
        expect(events).toEqual(
          expect.arrayContaining([
            { method: 'tools/call', protocol_version: STATELESS, stateless: 1, status: 200 },
            { method: 'tools/call', protocol_version: '2025-11-25', stateless: 0, status: 200 },
            { method: 'notifications/cancelled', protocol_version: null, stateless: 1, status: 202 },
          ]),
        );
        expect(events).toHaveLength(5);
      },
    );

    it.concurrent(
      'carries a subscriptions/listen stream on the channel and ends it with the graceful-closure response on EOF',
      async () => {
        const { peer, db } = raw('listen');
        const subscriptionOf = (frame: Record<string, unknown>) =>
          ((frame.params ?? frame.result) as { _meta?: Record<string, unknown> } | undefined)?._meta?.[
            `${META}/subscriptionId`
          ];
        peer.send({
          jsonrpc: '2.0',
          id: 'sub',
          method: 'subscriptions/listen',
          params: { notifications: { toolsListChanged: true }, _meta: envelope() },
        });
        await peer.next((frame) => frame.method === 'notifications/subscriptions/acknowledged');
        peer.send({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'add_tool', arguments: { name: 'late' }, _meta: envelope() },
        });
        await peer.next((frame) => frame.method === 'notifications/tools/list_changed');
        peer.child.stdin.end();
        expect(await peer.exited).toEqual({ code: 0, signal: null });
        expect(peer.frames.filter((frame) => subscriptionOf(frame) === 'sub')).toEqual([
          expect.objectContaining({ method: 'notifications/subscriptions/acknowledged' }),
          expect.objectContaining({ method: 'notifications/tools/list_changed' }),
          {
            jsonrpc: '2.0',
            id: 'sub',
            result: { resultType: 'complete', _meta: { [`${META}/subscriptionId`]: 'sub' } },
          },
        ]);
        expect(
          await rows(db, "SELECT status, session_ref FROM mcp_events WHERE method = 'subscriptions/listen'"),
        ).toEqual([{ status: 200, session_ref: null }]);
      },
    );
  });
});
