import { Client as Sdk2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as Sdk2StdioTransport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpClientModule, McpClientService } from '../../src/mcp';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { TS_REGISTER } from '../support/child-process';
import { pollUntil, waitUntilPast } from '../support/polling';
import { childEnv, RawStdioPeer, rows, stdioFixtureCommand, text } from '../fixtures/stdio-serve/stdio-serve-kit';

jest.setTimeout(120_000);

/**
 * A Nest app serving its mount with serveMcpOverStdio, spawned as desktop clients spawn local
 * servers: the official SDK clients (1.x and 2.x) and raw lines on its stdin, its audit rows in a
 * SQLite file the suite reads.
 */
describe('serveMcpOverStdio: an app spawned as a stdio MCP server', () => {
  const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-stdio-serve-'));
  const peers: RawStdioPeer[] = [];
  const closers: (() => Promise<void>)[] = [];

  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
    for (const peer of peers) await peer.kill();
    rmSync(workdir, { recursive: true, force: true });
  });

  function raw(name: string, extraEnv: Record<string, string> = {}): { peer: RawStdioPeer; db: string } {
    const db = join(workdir, `${name}.sqlite`);
    const { command, args, env } = stdioFixtureCommand(db);
    const peer = new RawStdioPeer(command, args, { ...env, ...extraEnv });
    peers.push(peer);
    return { peer, db };
  }

  describe('the official SDK 1.x client (StdioClientTransport)', () => {
    const db = join(workdir, 'sdk1.sqlite');
    let client: Client;
    let transport: StdioClientTransport;
    const transportErrors: Error[] = [];
    let stderr = '';

    beforeAll(async () => {
      const { command, args, env } = stdioFixtureCommand(db);
      transport = new StdioClientTransport({ command, args, env: childEnv(env), stderr: 'pipe' });
      transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      transport.onerror = (error) => transportErrors.push(error);
      client = new Client(
        { name: 'sdk1-stdio-e2e', version: '1.0.0' },
        { capabilities: { elicitation: {}, sampling: {}, roots: {} } },
      );
      client.setRequestHandler(CreateMessageRequestSchema, async () => ({
        role: 'assistant',
        content: { type: 'text', text: 'hi from the model' },
        model: 'test-model',
      }));
      client.setRequestHandler(ListRootsRequestSchema, async () => ({
        roots: [{ uri: 'file:///work', name: 'work' }],
      }));
      client.setRequestHandler(ElicitRequestSchema, async (request) => ({
        action: 'accept',
        content: { name: `Ada (asked: ${request.params.message})` },
      }));
      await client.connect(transport);
      closers.push(() => client.close());
    });

    it('initializes, lists and calls tools', async () => {
      expect(client.getServerVersion()).toEqual({ name: 'stdio-fixture', version: '1.0.0' });
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(
        expect.arrayContaining(['echo', 'chatty', 'count', 'ask', 'whoami', 'slow']),
      );
      expect(text(await client.callTool({ name: 'echo', arguments: { text: 'over stdio' } }))).toBe('over stdio');
    });

    it('delivers progress and log messages of a call before its result', async () => {
      const logged: unknown[] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
        logged.push(notification.params.data);
      });
      await client.setLoggingLevel('info');
      const progress: number[] = [];
      const result = await client.callTool({ name: 'count', arguments: {} }, undefined, {
        onprogress: (update) => progress.push(update.progress),
      });
      expect(text(result)).toBe('counted to 3');
      expect(progress).toEqual([1, 2, 3]);
      expect(logged).toEqual([{ step: 1 }, { step: 2 }, { step: 3 }]);
    });

    it('passes an elicitation to the client and the answer back to the tool', async () => {
      expect(text(await client.callTool({ name: 'ask', arguments: {} }))).toBe('hello Ada (asked: What is your name?)');
    });

    it('passes sampling and roots requests to the client', async () => {
      expect(text(await client.callTool({ name: 'consult', arguments: {} }))).toBe(
        'model: hi from the model; roots: file:///work',
      );
    });

    it('tells the session that the tool list changed, and serves the tool added at run time', async () => {
      const changed = new Promise<void>((resolve) =>
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
      );
      expect(text(await client.callTool({ name: 'add_tool', arguments: { name: 'late' } }))).toBe('added late');
      await changed;
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('late');
      expect(text(await client.callTool({ name: 'late', arguments: {} }))).toBe('added');
    });

    it("keeps a tool's console.log and process.stdout.write off the protocol stream (they go to stderr)", async () => {
      expect(text(await client.callTool({ name: 'chatty', arguments: { text: 'hi' } }))).toBe('said hi');
      expect(text(await client.callTool({ name: 'echo', arguments: { text: 'still fine' } }))).toBe('still fine');
      expect(transportErrors).toEqual([]);
      expect(stderr).toContain('console.log says hi');
      expect(stderr).toContain('process.stdout.write says hi');
    });

    it('writes the session and an audit row per exchange with the configured principal', async () => {
      const sessions = await rows(db, 'SELECT session_id, principal_key, principal_label FROM mcp_inbound_sessions');
      expect(sessions).toEqual([expect.objectContaining({ principal_key: 'local', principal_label: 'Local user' })]);
      const whoami = text(await client.callTool({ name: 'whoami', arguments: {} }));
      expect(whoami).toBe(`local/Local user on ${String(sessions[0].session_id)}`);
      const calls = await rows(
        db,
        "SELECT principal_key, status FROM mcp_events WHERE method = 'tools/call' AND direction = 'inbound'",
      );
      expect(calls.length).toBeGreaterThanOrEqual(9);
      expect(new Set(calls.map((row) => row.principal_key))).toEqual(new Set(['local']));
      expect(await rows(db, "SELECT method FROM mcp_events WHERE method = 'initialize'")).toHaveLength(1);
    });
  });

  describe('the official SDK 2.x client (@modelcontextprotocol/client/stdio)', () => {
    // In auto negotiation it speaks 2026-07-28 (stdio-serve-stateless).
    it.each(['legacy'] as const)(
      'in %s negotiation: initializes on 2025-11-25, lists and calls tools, answers an elicitation',
      async (mode) => {
        const db = join(workdir, `sdk2-${mode}.sqlite`);
        const { command, args, env } = stdioFixtureCommand(db);
        const transport = new Sdk2StdioTransport({ command, args, env: childEnv(env), stderr: 'pipe' });
        const client = new Sdk2Client(
          { name: 'sdk2-stdio-e2e', version: '2.0.0' },
          { capabilities: { elicitation: {} }, versionNegotiation: { mode } },
        );
        client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Grace' } }));
        await client.connect(transport);
        closers.push(() => client.close());
        const { tools } = await client.listTools();
        expect(tools.map((tool) => tool.name)).toContain('echo');
        const echoed = await client.callTool({ name: 'echo', arguments: { text: 'sdk 2' } });
        expect(echoed.content).toEqual([{ type: 'text', text: 'sdk 2' }]);
        const asked = await client.callTool({ name: 'ask', arguments: {} });
        expect(asked.content).toEqual([{ type: 'text', text: 'hello Grace' }]);
        await client.close();
        expect(
          await rows(db, 'SELECT principal_key, protocol_version, terminated_at FROM mcp_inbound_sessions'),
        ).toEqual([{ principal_key: 'local', protocol_version: '2025-11-25', terminated_at: expect.anything() }]);
      },
    );
  });

  describe("durable-mcp's own client (McpClientModule, stdio server entries)", () => {
    let pg: TestDatabase;
    let host: RunningApp;
    let client: McpClientService;
    const perCallDb = join(workdir, 'client-per-call.sqlite');
    const pooledDb = join(workdir, 'client-pooled.sqlite');

    beforeAll(async () => {
      pg = await createTestDatabase();
      const entry = (db: string) => {
        const { command, args, env } = stdioFixtureCommand(db);
        // Pinned to the session revision: in auto negotiation the app speaks 2026-07-28 (stdio-serve-stateless).
        // The app ends its session and exits on EOF by itself; a long close grace lets a loaded machine
        // finish that instead of the client's SIGTERM/SIGKILL cutting it short after the default 2 s.
        return {
          command: [command, ...args],
          env: childEnv(env),
          timeoutMs: 60_000,
          closeGraceMs: 30_000,
          version: '2025-11-25' as const,
        };
      };
      host = await startApp(pg.url, {
        imports: [
          McpClientModule.forRoot({
            servers: {
              perCall: entry(perCallDb),
              pooled: { ...entry(pooledDb), stateless: true, pool: { max: 1, idleMs: 60_000 } },
            },
          }),
        ],
      });
      closers.push(async () => {
        await host.close();
        await pg.drop();
      });
      client = host.app.get(McpClientService);
    });

    // The two servers share nothing but the host app's client (each its own process and SQLite
    // file): the pooled one boots while the per-call one spawns process after process.
    it.concurrent('calls the app spawned per call: one session per call, each ended', async () => {
      expect((await client.listTools('perCall')).map((tool) => tool.name)).toContain('echo');
      expect(text(await client.callTool('perCall', 'echo', { text: 'durable' }))).toBe('durable');
      const first = text(await client.callTool('perCall', 'whoami', {}));
      const second = text(await client.callTool('perCall', 'whoami', {}));
      expect(first).toMatch(/^local\/Local user on \S+$/);
      expect(second).not.toBe(first);
      // The client shuts each child down after handing back its result, so the last session ends
      // a moment after the call: wait for it (within the close grace) rather than race it.
      const sessions = await pollUntil(
        'every per-call session ended',
        async () => {
          const found = await rows(perCallDb, 'SELECT terminated_at FROM mcp_inbound_sessions');
          return found.length >= 3 && found.every((row) => row.terminated_at !== null) ? found : undefined;
        },
        40_000,
        100,
      );
      expect(sessions.filter((row) => row.terminated_at === null)).toEqual([]);
    });

    it.concurrent('calls the app from the warm pool: the kept process serves its session call after call', async () => {
      const first = text(await client.callTool('pooled', 'whoami', {}));
      expect(text(await client.callTool('pooled', 'echo', { text: 'warm' }))).toBe('warm');
      expect(text(await client.callTool('pooled', 'whoami', {}))).toBe(first);
    });
  });

  // Each case spawns an app of its own (with its own SQLite file) and reads what that one did:
  // they run side by side, a process booting (about 1.5 s of CPU) while another is served.
  describe('the example app (src/main.ts)', () => {
    const root = join(__dirname, '..', '..');
    const env = (extra: Record<string, string>) => ({ TS_NODE_PROJECT: join(root, 'tsconfig.json'), ...extra });

    it.concurrent(
      'serves over stdio with --stdio for MCP_STDIO_PRINCIPAL, its rows in SQLITE_FILE, and exits 0 on EOF',
      async () => {
        const db = join(workdir, 'example', 'app.sqlite');
        const peer = new RawStdioPeer(
          process.execPath,
          ['-r', TS_REGISTER, join(root, 'src', 'main.ts'), '--stdio'],
          env({ SQLITE_FILE: db, MCP_STDIO_PRINCIPAL: 'desk' }),
          workdir,
        );
        peers.push(peer);
        expect(await peer.initialize()).toMatchObject({ result: { serverInfo: { name: 'durable-mcp-demo' } } });
        peer.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } });
        expect(await peer.answer(1)).toMatchObject({
          result: { structuredContent: { principal: 'desk', mount: 'default' } },
        });
        peer.child.stdin.end();
        expect(await peer.exited).toEqual({ code: 0, signal: null });
        expect(peer.frames.filter((frame) => frame.jsonrpc !== '2.0')).toEqual([]);
        expect(await rows(db, "SELECT principal_key FROM mcp_events WHERE method = 'tools/call'")).toEqual([
          { principal_key: 'desk' },
        ]);
      },
    );

    it.concurrent('serves over stdio with MCP_TRANSPORT=stdio to the SDK client', async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: ['-r', TS_REGISTER, join(root, 'src', 'main.ts')],
        env: childEnv(env({ SQLITE_FILE: join(workdir, 'example-env.sqlite'), MCP_TRANSPORT: 'stdio' })),
        cwd: workdir,
        stderr: 'pipe',
      });
      const client = new Client({ name: 'example-stdio-e2e', version: '1.0.0' });
      await client.connect(transport);
      closers.push(() => client.close());
      expect(text(await client.callTool({ name: 'echo', arguments: { text: 'demo' } }))).toBe('demo');
      await client.close();
    });
  });

  // Each case spawns an app of its own (raw(), with its own SQLite file) and ends it: they run
  // side by side (up to Jest's maxConcurrency at once), a process booting while another is served
  // or waits out an idle TTL or a slow call.
  describe('raw lines on stdin', () => {
    it.concurrent('answers a malformed line with a parse error and keeps serving', async () => {
      const { peer } = raw('malformed');
      await peer.initialize();
      peer.send('{"jsonrpc": "2.0", "id": 7, "method": ');
      expect(await peer.next((frame) => frame.id === null)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: expect.stringContaining('Parse error') },
      });
      peer.send({
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'after' } },
      });
      expect(await peer.answer(8)).toMatchObject({ result: { content: [{ type: 'text', text: 'after' }] } });
      peer.child.stdin.end();
      expect(await peer.exited).toEqual({ code: 0, signal: null });
    });

    it.concurrent(
      "writes a call's progress and log messages before its result, in the order the tool sent them",
      async () => {
        const { peer } = raw('ordered');
        await peer.initialize();
        peer.send({ jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'info' } });
        await peer.answer(1);
        peer.send({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'count', arguments: {}, _meta: { progressToken: 'p' } },
        });
        await peer.answer(2);
        const start = peer.frames.findIndex((frame) => frame.id === 1);
        const shown = peer.frames.slice(start + 1).map((frame) => {
          const params = frame.params as { progress?: number; data?: { step: number } } | undefined;
          if (frame.method === 'notifications/progress') return `progress ${params?.progress}`;
          if (frame.method === 'notifications/message') return `log ${params?.data?.step}`;
          return frame.id === 2 ? 'result' : JSON.stringify(frame);
        });
        expect(shown).toEqual(['progress 1', 'log 1', 'progress 2', 'log 2', 'progress 3', 'log 3', 'result']);
        peer.child.stdin.end();
        expect(await peer.exited).toEqual({ code: 0, signal: null });
      },
    );

    it.concurrent('writes nothing but JSON-RPC on stdout while a tool writes to stdout', async () => {
      const { peer } = raw('chatty');
      await peer.initialize();
      peer.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'chatty', arguments: { text: 'x' } } });
      await peer.answer(1);
      peer.child.stdin.end();
      expect(await peer.exited).toEqual({ code: 0, signal: null });
      expect(peer.frames.filter((frame) => frame.jsonrpc !== '2.0')).toEqual([]);
      expect(peer.stderr).toContain('console.log says x');
    });

    it.concurrent('refuses requests before initialize', async () => {
      const { peer } = raw('uninitialized');
      peer.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(await peer.answer(1)).toMatchObject({
        error: { code: -32000, message: expect.stringContaining('initialize') },
      });
      peer.child.stdin.end();
      expect(await peer.exited).toEqual({ code: 0, signal: null });
    });

    it.concurrent('refuses a second initialize and a line over maxBodyBytes, and keeps serving', async () => {
      const { peer } = raw('edges', { STDIO_MAX_BODY_BYTES: '1024' });
      await peer.initialize();
      peer.send({
        jsonrpc: '2.0',
        id: 'again',
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'again', version: '1' } },
      });
      expect(await peer.answer('again')).toMatchObject({
        error: { code: -32600, message: expect.stringContaining('already initialized') },
      });
      peer.send({
        jsonrpc: '2.0',
        id: 'big',
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'x'.repeat(4096) } },
      });
      expect(await peer.next((frame) => frame.id === null)).toMatchObject({
        error: { code: -32600, message: expect.stringContaining('longer than 1024') },
      });
      peer.send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'small' } },
      });
      expect(await peer.answer(2)).toMatchObject({ result: { content: [{ type: 'text', text: 'small' }] } });
      expect(peer.frames.some((frame) => frame.id === 'big')).toBe(false);
      peer.child.stdin.end();
      expect(await peer.exited).toEqual({ code: 0, signal: null });
    });

    it.concurrent(
      'goes on with a new session when its session was found idle (a desktop client left open)',
      async () => {
        const idleTtlMs = 1000;
        const { peer, db } = raw('idle', { STDIO_IDLE_TTL_MS: String(idleTtlMs) });
        await peer.initialize();
        const whoami = async (id: number) => {
          peer.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'whoami', arguments: {} } });
          const answer = (await peer.answer(id)) as { result: { content: { text: string }[] } };
          return answer.result.content[0].text;
        };
        const first = await whoami(1);
        await waitUntilPast(Date.now(), idleTtlMs + 500);
        const second = await whoami(2);
        expect(second).toMatch(/^local\/Local user on \S+$/);
        expect(second).not.toBe(first);
        expect(await whoami(3)).toBe(second);
        peer.child.stdin.end();
        expect(await peer.exited).toEqual({ code: 0, signal: null });
        const sessions = await rows(db, 'SELECT session_id, terminated_at FROM mcp_inbound_sessions');
        expect(sessions).toHaveLength(2);
        expect(sessions.filter((row) => row.terminated_at === null)).toEqual([]);
      },
    );

    it.concurrent('aborts a call on notifications/cancelled from the client', async () => {
      const { peer, db } = raw('cancel');
      await peer.initialize();
      peer.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'until_cancelled', arguments: {}, _meta: { progressToken: 'run' } },
      });
      await peer.next((frame) => frame.method === 'notifications/progress');
      peer.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'user' } });
      expect(await peer.answer(1)).toMatchObject({ result: { content: [{ text: 'stopped by the client' }] } });
      peer.child.stdin.end();
      expect(await peer.exited).toEqual({ code: 0, signal: null });
      expect(await rows(db, "SELECT method, status FROM mcp_events WHERE method = 'notifications/cancelled'")).toEqual([
        { method: 'notifications/cancelled', status: 202 },
      ]);
    });

    it.concurrent('on EOF answers the requests it read, ends the session and exits 0', async () => {
      const { peer, db } = raw('eof');
      await peer.initialize();
      peer.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { ms: 300 } } });
      peer.child.stdin.end();
      expect(await peer.exited).toEqual({ code: 0, signal: null });
      expect(peer.frames.find((frame) => frame.id === 1)).toMatchObject({
        result: { content: [{ type: 'text', text: 'waited 300 ms' }] },
      });
      expect(await rows(db, 'SELECT terminated_at FROM mcp_inbound_sessions')).toEqual([
        { terminated_at: expect.anything() },
      ]);
      expect(await rows(db, "SELECT kind, status FROM mcp_events WHERE kind = 'terminate'")).toEqual([
        { kind: 'terminate', status: 204 },
      ]);
    });

    it.concurrent('on SIGTERM lets the call in flight finish and exits 0', async () => {
      const { peer } = raw('sigterm');
      await peer.initialize();
      peer.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'slow', arguments: { ms: 1500 }, _meta: { progressToken: 'slow' } },
      });
      // The call is running once its first progress arrives.
      await peer.next((frame) => frame.method === 'notifications/progress');
      peer.child.kill('SIGTERM');
      await peer.next((frame) => frame.id === 1);
      expect(await peer.exited).toEqual({ code: 0, signal: null });
      expect(peer.frames.find((frame) => frame.id === 1)).toMatchObject({
        result: { content: [{ type: 'text', text: 'waited 1500 ms' }] },
      });
    });
  });
});
