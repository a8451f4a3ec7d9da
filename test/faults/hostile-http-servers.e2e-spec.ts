import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { startHostileHttpServer, type HostileHttpServer } from '../fixtures/http/hostile-http-server';
import type { ProbeReport } from '../fixtures/http/http-client-probe';
import { TS_REGISTER } from '../support/child-process';

const ROOT = join(__dirname, '..', '..');
const MiB = 1024 * 1024;
/** The documented default of both caps: maxResponseBytes (bytes) and maxEventChars (characters). */
const CAP = 16 * MiB;
/**
 * What the probe may grow by (RSS, from right before the case) while a hostile server tries to
 * make it hold a gigabyte: measured at 50-56 MiB for the endless SSE line and 43-45 MiB for the
 * 1 GiB JSON answer, several times the cap, so the bound is the cap plus 80 MiB. A transport that
 * read on past the cap would cross it within the first tenth of the gigabyte. Measured from the
 * case's own start, not the probe's: the cases run one after the other in one process, and the
 * pages the allocator keeps after one case (17-52 MiB after the 1 GiB JSON answer) are not the
 * next case's holding.
 */
const MEMORY_BOUND = CAP + 80 * MiB;
/**
 * What a case that must leave the body unread may grow by while it runs: less than the cap it would
 * have had to read (measured up to 8 MiB: the sockets' buffers and the first use of the parser).
 */
const UNREAD_MEMORY_BOUND = CAP;
/** The deadline the drip case sets, and the bound it is held to: three times it plus 2 s. */
const DRIP_TIMEOUT_MS = 2_000;
const DRIP_BOUND_MS = DRIP_TIMEOUT_MS * 3 + 2_000;
/** How long the probe child may take for all its cases (its boot included). */
const PROBE_DEADLINE_MS = 170_000;

/**
 * The HTTP transport against servers that try to exhaust a worker: an endless SSE line, a 1 GiB
 * JSON answer (with and without Content-Length), a 1 GiB HTML page, a slow drip and a redirect
 * loop. The client runs in a child process that samples its own memory while each call runs;
 * every case must end in its typed error, with the process's RSS staying within MEMORY_BOUND of
 * where it was when the case began.
 */
describe('HttpTransport against hostile HTTP servers (client in a separate process)', () => {
  let server: HostileHttpServer;
  const children = new Set<ChildProcess>();
  let reports: Map<string, ProbeReport>;

  function probe(
    cases: Array<{ name: string; path: string; timeoutMs: number; close?: boolean; issuerPath?: string }>,
  ): Promise<Map<string, ProbeReport>> {
    const env = {
      ...process.env,
      TS_NODE_PROJECT: join(ROOT, 'tsconfig.spec.json'),
      PROBE_CASES: JSON.stringify(
        cases.map((c) => ({
          name: c.name,
          url: `${server.url}${c.path}`,
          timeoutMs: c.timeoutMs,
          close: c.close,
          authorizationServer: c.issuerPath && `${server.url}${c.issuerPath}`,
        })),
      ),
    };
    const child = spawn(
      process.execPath,
      ['--expose-gc', '-r', TS_REGISTER, join(ROOT, 'test/fixtures/http/http-client-probe.ts')],
      {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.add(child);
    let out = '';
    let err = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    return new Promise((resolve, reject) => {
      // Killed, with what it printed, before the hook's own timeout would fail without a word.
      const deadline = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`probe did not finish within ${PROBE_DEADLINE_MS} ms and was killed:\n${out}${err}`));
      }, PROBE_DEADLINE_MS);
      child.once('exit', (code) => {
        clearTimeout(deadline);
        children.delete(child);
        if (code !== 0) return reject(new Error(`probe exited with ${code}:\n${err}`));
        const lines = out
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as ProbeReport);
        resolve(new Map(lines.map((report) => [report.name, report])));
      });
    });
  }

  beforeAll(async () => {
    server = await startHostileHttpServer();
    // The cases that must not read the body run first, while the process has not yet grown: a
    // case that ran after the big ones could reuse their freed pages without its RSS growing. The
    // redirect goes first of all: the first call of a process also loads and compiles the client.
    reports = await probe([
      { name: 'redirect', path: '/redirect', timeoutMs: 120_000 },
      { name: 'html', path: '/html', timeoutMs: 120_000 },
      { name: 'huge-json-length', path: '/huge-json-length', timeoutMs: 120_000 },
      { name: 'drip', path: '/drip', timeoutMs: DRIP_TIMEOUT_MS },
      { name: 'delete-huge', path: '/delete-huge', timeoutMs: 120_000, close: true },
      { name: 'reply-huge', path: '/reply-huge', timeoutMs: 120_000 },
      { name: 'cancel-huge', path: '/cancel-huge', timeoutMs: 2_000 },
      { name: 'oauth-huge-prm', path: '/oauth-huge-prm', timeoutMs: 120_000, issuerPath: '/as' },
      { name: 'oauth-huge-as', path: '/oauth-huge-as', timeoutMs: 120_000, issuerPath: '/as-huge' },
      { name: 'oauth-huge-token', path: '/oauth-huge-token', timeoutMs: 120_000, issuerPath: '/as-token' },
      { name: 'huge-json', path: '/huge-json', timeoutMs: 120_000 },
      { name: 'endless-sse', path: '/endless-sse', timeoutMs: 120_000 },
    ]);
  }, 180_000);

  afterAll(async () => {
    if (process.env.FAULTS_DEBUG)
      console.log(JSON.stringify({ reports: [...(reports?.values() ?? [])], written: server?.written }, null, 1));
    for (const child of children) child.kill('SIGKILL');
    await server?.close();
  });

  function report(name: string): ProbeReport {
    const found = reports.get(name);
    if (!found) throw new Error(`no report for ${name}`);
    return found;
  }

  function expectBoundedMemory(name: string): void {
    const { peakRss, caseBaselineRss } = report(name);
    expect(peakRss - caseBaselineRss).toBeLessThanOrEqual(MEMORY_BOUND);
  }

  /** The case held next to nothing while it ran: the body was not read. */
  function expectUnreadMemory(name: string): void {
    const { peakRss, caseBaselineRss } = report(name);
    expect(peakRss - caseBaselineRss).toBeLessThan(UNREAD_MEMORY_BOUND);
    expectBoundedMemory(name);
  }

  it('an endless SSE line ends in McpProtocolError (delivered) after maxEventChars, with bounded memory', () => {
    expect(report('endless-sse')).toMatchObject({ outcome: 'error', errorName: 'McpProtocolError', delivered: true });
    expect(report('endless-sse').message).toContain('longer than maxEventChars (16777216 characters)');
    // The client let go right after the cap, not near the gigabyte: the server's writes stopped
    // with it. Beyond the cap, only what the sockets and the reader buffer (measured 36-41 MiB in all).
    expect(server.written['/endless-sse']).toBeLessThanOrEqual(CAP + 32 * MiB);
    expectBoundedMemory('endless-sse');
  });

  it('a 1 GiB JSON answer streamed without a length ends in McpProtocolError after maxResponseBytes, with bounded memory', () => {
    expect(report('huge-json')).toMatchObject({ outcome: 'error', errorName: 'McpProtocolError', delivered: true });
    expect(report('huge-json').message).toContain('larger than maxResponseBytes (16777216 bytes)');
    // Measured 23-24 MiB: the cap and what the sockets buffer.
    expect(server.written['/huge-json']).toBeLessThanOrEqual(CAP + 16 * MiB);
    expectBoundedMemory('huge-json');
  });

  it('a declared 1 GiB Content-Length is refused before the body is read', () => {
    expect(report('huge-json-length')).toMatchObject({
      outcome: 'error',
      errorName: 'McpProtocolError',
      delivered: true,
    });
    expect(report('huge-json-length').message).toContain('larger than maxResponseBytes (16777216 bytes)');
    // Only what the sockets took before the client closed (measured 7.5 MiB), never the cap.
    expect(server.written['/huge-json-length']).toBeLessThan(CAP);
    expectUnreadMemory('huge-json-length');
  });

  it('a 200 text/html page is a McpProtocolError naming the content type, its body left unread', () => {
    expect(report('html')).toMatchObject({ outcome: 'error', errorName: 'McpProtocolError', delivered: true });
    expect(report('html').message).toContain('Content-Type "text/html; charset=utf-8"');
    expect(server.written['/html']).toBeLessThan(CAP);
    expectUnreadMemory('html');
  });

  it('a slow drip ends at the call deadline with McpTimeoutError', () => {
    expect(report('drip')).toMatchObject({
      outcome: 'error',
      errorName: 'McpTimeoutError',
      delivered: true,
      timeoutMs: DRIP_TIMEOUT_MS,
    });
    // Counted from the moment the call was issued to a server that drips from its first byte.
    // It takes the deadline plus the time the transport gives the best-effort
    // notifications/cancelled (which goes to the same dripping server): no more than the deadline.
    expect(report('drip').elapsedMs).toBeLessThanOrEqual(DRIP_BOUND_MS);
    // It was dripping when the deadline hit: some bytes came, far fewer than a full answer.
    expect(server.written['/drip']).toBeGreaterThan(0);
  });

  it('a redirect to itself is not followed: one request, McpTransportError with status 302', () => {
    expect(report('redirect')).toMatchObject({
      outcome: 'error',
      errorName: 'McpTransportError',
      status: 302,
      delivered: false,
    });
    expect(server.hits['POST /redirect']).toBe(1);
    expectBoundedMemory('redirect');
  });

  // The bodies below are read only in part (an error's start, or an OAuth document of at most
  // 64 KiB) or not at all: the server's writes stop with the client, far below its gigabyte.
  const SMALL_READ_BOUND = 32 * MiB;

  it('a DELETE answered with a 1 GiB error body: McpTransportError with its start, the rest unread', () => {
    expect(report('delete-huge')).toMatchObject({ outcome: 'error', errorName: 'McpTransportError', status: 500 });
    expect(report('delete-huge').message).toMatch(/answered HTTP 500: error: x{190}/);
    expect(server.written['/delete-huge']).toBeLessThan(SMALL_READ_BOUND);
    expectBoundedMemory('delete-huge');
  });

  it('an answer to a server request met with a 1 GiB error body fails the call, the rest unread', () => {
    expect(report('reply-huge')).toMatchObject({
      outcome: 'error',
      errorName: 'McpTransportError',
      status: 500,
      delivered: true,
    });
    expect(report('reply-huge').message).toContain('Could not answer the "ping" request of MCP server "reply-huge"');
    expect(server.written['/reply-huge']).toBeLessThan(SMALL_READ_BOUND);
    expectBoundedMemory('reply-huge');
  });

  it('a cancel notice answered with 1 GiB: the call still ends at its deadline, the answer unread', () => {
    expect(report('cancel-huge')).toMatchObject({
      outcome: 'error',
      errorName: 'McpTimeoutError',
      delivered: true,
      timeoutMs: 2_000,
    });
    expect(server.written['/cancel-huge'] ?? 0).toBeLessThan(SMALL_READ_BOUND);
    expectBoundedMemory('cancel-huge');
  });

  it.each([
    ['oauth-huge-prm', '/.well-known/oauth-protected-resource/oauth-huge-prm'],
    ['oauth-huge-as', '/.well-known/oauth-authorization-server/as-huge'],
    ['oauth-huge-token', '/as-token/token'],
  ])(
    '%s: a 1 GiB OAuth document stops at 64 KiB with McpTransportError (delivered false), the rest unread',
    (name, path) => {
      expect(report(name)).toMatchObject({ outcome: 'error', errorName: 'McpTransportError', delivered: false });
      expect(report(name).message).toContain('answered a body larger than maxResponseBytes (65536 bytes)');
      expect(report(name).message).not.toContain('probe-secret');
      expect(server.written[path]).toBeGreaterThan(0);
      expect(server.written[path]).toBeLessThan(SMALL_READ_BOUND);
      expectBoundedMemory(name);
    },
  );
});
