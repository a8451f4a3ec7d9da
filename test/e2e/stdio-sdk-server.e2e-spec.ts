import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpConfigurationError } from '../../src/mcp/errors/mcp-configuration.errors';
import { McpTimeoutError } from '../../src/mcp/errors/mcp-client.errors';
import { StdioTransport } from '../../src/mcp/client/transports/stdio/stdio.transport';
import { toStdioArgv } from '../../src/mcp/client/transports/stdio/stdio-argv';
import {
  call,
  context,
  isAlive,
  waitUntil,
  pidRecorder,
  request,
  sdkServer,
  toolCall,
} from '../fixtures/stdio/stdio-test-kit';

describe('StdioTransport against a server built with the official SDK 1.x', () => {
  const spawned = pidRecorder();
  const transport = new StdioTransport({ command: sdkServer(), onSpawn: spawned.onSpawn });

  afterAll(async () => {
    await transport.close();
    expect(spawned.pids.filter(isAlive)).toEqual([]);
  });

  it('spawns, initializes, calls and shuts down within one deliver', async () => {
    const { result, delivery } = await call(transport, toolCall('add', { a: 19, b: 23 }));
    expect(result.structuredContent).toEqual({ sum: 42 });
    expect(delivery.handshake).toEqual({
      protocolVersion: '2025-11-25',
      serverInfo: { name: 'stdio-fixture', version: '1.2.3' },
      capabilities: expect.objectContaining({ tools: expect.any(Object) }),
      instructions: 'Fixture server for the stdio transport tests.',
    });
    expect(delivery.stderr).toBe(`stdio-fixture ready (pid ${spawned.pids.at(-1)})\n`);
    expect(JSON.parse(delivery.rawRequest)).toEqual({
      jsonrpc: '2.0',
      id: delivery.body?.id,
      method: 'tools/call',
      params: { name: 'add', arguments: { a: 19, b: 23 } },
    });
    // The shutdown runs after the result was returned, not in the caller's time.
    await waitUntil(() => !isAlive(spawned.pids.at(-1) as number), 10_000, 'the server to be shut down after its call');
  });

  it('uses a new process for every call', async () => {
    const first = await call(transport, toolCall('whoami'));
    const second = await call(transport, toolCall('whoami'));
    expect(first.result.structuredContent.pid).not.toBe(second.result.structuredContent.pid);
  });

  it('lists tools and round-trips non-ASCII text as UTF-8', async () => {
    const { result } = await call(transport, request('tools/list'));
    expect((result.tools as Array<{ name: string }>).map((t) => t.name).sort()).toEqual(['add', 'echo', 'whoami']);
    const text = 'ünïcödé — 漢字 — 🚀 '.repeat(5000);
    const echoed = await call(transport, toolCall('echo', { text }));
    expect(echoed.result.content).toEqual([{ type: 'text', text }]);
  });

  it('returns a JSON-RPC error answer in the body', async () => {
    const delivery = await transport.deliver(request('no/such/method'), { sessionId: null, context: context() });
    expect(delivery.body).toMatchObject({ error: { code: -32601 } });
  });

  it('delivers a notification without waiting for an answer', async () => {
    const delivery = await transport.deliver(
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      { sessionId: null, context: context() },
    );
    expect(delivery).toMatchObject({
      body: null,
      rawResponse: null,
      rawRequest: '{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}',
    });
  });

  it('an already aborted signal fails before anything is spawned', async () => {
    const before = spawned.pids.length;
    const promise = transport.deliver(toolCall('whoami'), {
      sessionId: null,
      context: context({ signal: AbortSignal.abort() }),
    });
    await expect(promise).rejects.toBeInstanceOf(McpTimeoutError);
    await expect(promise).rejects.toMatchObject({ delivered: false });
    await new Promise(setImmediate);
    expect(spawned.pids.length).toBe(before);
  });
});

describe('StdioTransport environment and working directory', () => {
  const SECRET = 'MCP_TEST_SECRET';
  let directory: string;

  beforeAll(() => {
    process.env[SECRET] = 'do-not-leak';
    directory = realpathSync(mkdtempSync(join(tmpdir(), 'stdio-cwd-')));
  });
  afterAll(() => {
    delete process.env[SECRET];
    rmSync(directory, { recursive: true, force: true });
  });

  it('the child sees only the allowlisted variables plus the configured env, in the configured cwd', async () => {
    const transport = new StdioTransport({ command: sdkServer(), env: { FIXTURE_MODE: 'configured' }, cwd: directory });
    const { result } = await call(transport, toolCall('whoami'));
    const env = result.structuredContent.env as Record<string, string>;
    expect(env[SECRET]).toBeUndefined();
    expect(env.FIXTURE_MODE).toBe('configured');
    expect(env.PATH).toBe(process.env.PATH);
    expect(
      Object.keys(env).every((name) =>
        ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'FIXTURE_MODE'].includes(name),
      ),
    ).toBe(true);
    expect(result.structuredContent.cwd).toBe(directory);
    await transport.close();
  });
});

describe('StdioTransport configuration', () => {
  it('rejects a shell string with a message explaining argv', () => {
    expect(() => new StdioTransport({ command: 'node server.js' as unknown as string[] })).toThrow(
      McpConfigurationError,
    );
    expect(() => new StdioTransport({ command: 'node server.js' as unknown as string[] })).toThrow(/argv array/);
  });

  it('rejects an empty argv and non-string entries', () => {
    expect(() => new StdioTransport({ command: [] })).toThrow(/empty array/);
    expect(() => new StdioTransport({ command: ['node', 3 as unknown as string] })).toThrow(/index 1/);
  });

  it('rejects a pool without stateless: true', () => {
    expect(() => new StdioTransport({ command: sdkServer(), pool: { max: 2, idleMs: 1000 } })).toThrow(
      /stateless: true/,
    );
    expect(() => new StdioTransport({ command: sdkServer(), stateless: true, pool: { max: 0, idleMs: 1000 } })).toThrow(
      /pool\.max/,
    );
  });

  it('builds argv from a Claude-Desktop style entry', () => {
    expect(toStdioArgv({ command: 'npx', args: ['-y', 'server'] })).toEqual(['npx', '-y', 'server']);
    expect(() => toStdioArgv({ command: 'npx -y server' })).toThrow(/"args"/);
  });
});
