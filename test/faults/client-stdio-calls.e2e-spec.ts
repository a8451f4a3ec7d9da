import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpClientModule, McpClientService, type McpServerConfig } from '../../src/mcp';
import { McpTimeoutError } from '../../src/mcp/errors';
import { InMemoryMcpEventSink, InMemoryMcpOutboundSessionStore } from '../../src/mcp/testing';
import { isAlive, rawServer, waitUntil } from '../fixtures/stdio/stdio-test-kit';
import { mcpClientStores } from '../../src/mcp/stores';

/** The methods a raw fixture received, one per line it read, in order. */
function received(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { method?: string }).method ?? '(response)');
}

/**
 * The client over stdio, end to end (inline queue, in-memory stores): how many processes a call
 * costs, whose time the shutdown of a child takes, and that the caller's timeout holds across
 * retries. The raw fixture records every line it reads, so each `initialize` in its file is one
 * process started.
 */
describe('McpClientService over stdio: spawns, deadlines and shutdown', () => {
  let scratch: string;
  let app: INestApplication | undefined;
  const seenPids: number[] = [];

  beforeAll(() => (scratch = mkdtempSync(join(tmpdir(), 'client-stdio-'))));
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  afterAll(async () => {
    // Every test closes its app, which ends (and awaits) every process of its transports.
    await waitUntil(() => seenPids.filter(isAlive).length === 0, 15_000, 'every fixture process to be gone');
    rmSync(scratch, { recursive: true, force: true });
  });

  async function boot(
    servers: Record<string, McpServerConfig>,
    queue = { attempts: 3, backoffMs: 500 },
  ): Promise<McpClientService> {
    const stores = mcpClientStores({
      outboundSessions: new InMemoryMcpOutboundSessionStore(),
      events: new InMemoryMcpEventSink(),
    });
    const moduleRef = await Test.createTestingModule({
      imports: [McpClientModule.forRoot({ servers, queue, stores })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'] });
    await app.init();
    return app.get(McpClientService);
  }

  function fixture(mode: string, record: string, extra: Partial<McpServerConfig> = {}): McpServerConfig {
    return {
      command: rawServer(mode),
      env: { STDIO_FIXTURE_RECORD: record },
      version: '2025-11-25',
      ...extra,
    } as McpServerConfig;
  }

  it('the first call to a spawn-per-call server spawns it once, and a server without ping serves it', async () => {
    const record = join(scratch, 'first-call.ndjson');
    const client = await boot({ raw: fixture('normal', record) });
    const first = await client.callTool('raw', 'info');
    seenPids.push((first.structuredContent as { pid: number }).pid);
    // One process: its own handshake told the capabilities; no ping (the fixture answers -32601).
    expect(received(record)).toEqual(['initialize', 'notifications/initialized', 'tools/call']);
    const second = await client.callTool('raw', 'info');
    seenPids.push((second.structuredContent as { pid: number }).pid);
    expect(received(record).filter((m) => m === 'initialize')).toHaveLength(2);
    expect(received(record)).not.toContain('ping');
  });

  it('returns a result while the server that ignores EOF and SIGTERM still runs; the shutdown comes after', async () => {
    const record = join(scratch, 'ignore-term.ndjson');
    const client = await boot({ raw: fixture('ignore-term', record) });
    const result = await client.callTool('raw', 'info');
    const pid = (result.structuredContent as { pid: number }).pid;
    seenPids.push(pid);
    expect(isAlive(pid)).toBe(true);
    await waitUntil(() => !isAlive(pid), 15_000, 'the server to be killed after its call');
  });

  it("timeoutMs is the caller's deadline across the queue's retries: one process, McpTimeoutError with that timeout", async () => {
    const record = join(scratch, 'no-init.ndjson');
    const client = await boot({ raw: fixture('no-init', record) });
    // A deadline far beyond a spawn on a loaded machine: the test goes on from the evidence that the
    // process read its initialize, and the deadline then runs out on the handshake it never answers.
    const issuedAt = Date.now();
    const failed = client.callTool('raw', 'info', {}, { timeoutMs: 10_000 });
    const outcome = failed.catch((error: unknown) => error);
    await waitUntil(() => received(record).length > 0, 10_000, 'the fixture to read its initialize');
    expect(received(record)).toEqual(['initialize']);
    const error = await outcome;
    // Held to the deadline (three times it plus 2 s, from the call), not to one deadline per attempt.
    expect(Date.now() - issuedAt).toBeLessThanOrEqual(10_000 * 3 + 2_000);
    expect(error).toBeInstanceOf(McpTimeoutError);
    expect(error).toMatchObject({ timeoutMs: 10_000, delivered: false });
    expect(received(record)).toEqual(['initialize']);
    // Three attempts would have started two more processes within 1.5 s (backoff 500 ms, then
    // 1 s): none comes.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(received(record)).toEqual(['initialize']);
  }, 60_000);

  it('a retry that could only start after the deadline is not made', async () => {
    const spawns = join(scratch, 'early-exit.spawns');
    // A shell line per process started, then the fixture, which exits before reading anything:
    // each attempt fails at once and undelivered (retryable), and the backoff outlasts the deadline.
    const [node, script] = rawServer();
    const command = ['sh', '-c', 'echo spawned >> "$0"; exec "$1" "$2" early-exit', spawns, node, script];
    const client = await boot({ raw: { command, version: '2025-11-25' } }, { attempts: 3, backoffMs: 20_000 });
    const issuedAt = Date.now();
    const failed = client.callTool('raw', 'info', {}, { timeoutMs: 5_000 });
    await expect(failed).rejects.toMatchObject({ name: 'McpTransportError', delivered: false });
    // Within the deadline's bound (three times it plus 2 s), so well before the 20 s backoff ends.
    expect(Date.now() - issuedAt).toBeLessThanOrEqual(5_000 * 3 + 2_000);
    expect(readFileSync(spawns, 'utf8')).toBe('spawned\n');
  }, 30_000);

  it('app close drains the stdio pool: every pooled process is gone when close resolves', async () => {
    const record = join(scratch, 'pool.ndjson');
    const client = await boot({
      pooled: fixture('ignore-term', record, { stateless: true, pool: { max: 2, idleMs: 60_000 } }),
    });
    const [a, b] = await Promise.all([client.callTool('pooled', 'inflight'), client.callTool('pooled', 'inflight')]);
    const pids = [a, b].map((r) => (r.structuredContent as { pid: number }).pid);
    seenPids.push(...pids);
    expect(new Set(pids).size).toBe(2);
    expect(pids.filter(isAlive)).toEqual(pids);
    await app?.close();
    app = undefined;
    expect(pids.filter(isAlive)).toEqual([]);
  }, 30_000);
});
