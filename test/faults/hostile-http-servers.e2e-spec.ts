import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { HOSTILE_BODY_BYTES, startHostileHttpServer, type HostileHttpServer } from '../fixtures/http/hostile-http-server';
import type { ProbeReport } from '../fixtures/http/http-client-probe';
import { TS_REGISTER } from '../support/child-process';

const ROOT = join(__dirname, '..', '..');
const MB = 1024 * 1024;
/** What a worker may grow by while a hostile server tries to make it hold a gigabyte. */
const MEMORY_BOUND = 200 * MB;
/** How long the probe child may take for all its cases (its boot included). */
const PROBE_DEADLINE_MS = 170_000;

/**
 * The HTTP transport against servers that try to exhaust a worker: an endless SSE line, a 1 GiB
 * JSON answer (with and without Content-Length), a 1 GiB HTML page, a slow drip and a redirect
 * loop. The client runs in a child process that samples its own memory while each call runs;
 * every case must end in its typed error, with the process's RSS staying within MEMORY_BOUND of
 * where it started.
 */
describe('HttpTransport against hostile HTTP servers (client in a separate process)', () => {
  let server: HostileHttpServer;
  const children = new Set<ChildProcess>();
  let reports: Map<string, ProbeReport>;

  function probe(cases: Array<{ name: string; path: string; timeoutMs: number }>): Promise<Map<string, ProbeReport>> {
    const env = {
      ...process.env,
      TS_NODE_PROJECT: join(ROOT, 'tsconfig.spec.json'),
      PROBE_CASES: JSON.stringify(cases.map((c) => ({ name: c.name, url: `${server.url}${c.path}`, timeoutMs: c.timeoutMs }))),
    };
    const child = spawn(process.execPath, ['--expose-gc', '-r', TS_REGISTER, join(ROOT, 'test/fixtures/http/http-client-probe.ts')], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
        const lines = out.trim().split('\n').map((line) => JSON.parse(line) as ProbeReport);
        resolve(new Map(lines.map((report) => [report.name, report])));
      });
    });
  }

  beforeAll(async () => {
    server = await startHostileHttpServer();
    reports = await probe([
      { name: 'endless-sse', path: '/endless-sse', timeoutMs: 120_000 },
      { name: 'huge-json', path: '/huge-json', timeoutMs: 120_000 },
      { name: 'huge-json-length', path: '/huge-json-length', timeoutMs: 120_000 },
      { name: 'html', path: '/html', timeoutMs: 120_000 },
      { name: 'drip', path: '/drip', timeoutMs: 2_000 },
      { name: 'redirect', path: '/redirect', timeoutMs: 120_000 },
    ]);
  }, 180_000);

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await server?.close();
  });

  function report(name: string): ProbeReport {
    const found = reports.get(name);
    if (!found) throw new Error(`no report for ${name}`);
    return found;
  }

  function expectBoundedMemory(name: string): void {
    const { peakRss, baselineRss } = report(name);
    expect(peakRss - baselineRss).toBeLessThan(MEMORY_BOUND);
  }

  it('an endless SSE line ends in McpProtocolError (delivered) after maxEventChars, with bounded memory', () => {
    expect(report('endless-sse')).toMatchObject({ outcome: 'error', errorName: 'McpProtocolError', delivered: true });
    expect(report('endless-sse').message).toContain('longer than maxEventChars (16777216 characters)');
    // The client let go long before the gigabyte: the server's writes stopped with it.
    expect(server.written['/endless-sse']).toBeLessThan(HOSTILE_BODY_BYTES / 4);
    expectBoundedMemory('endless-sse');
  });

  it('a 1 GiB JSON answer streamed without a length ends in McpProtocolError after maxResponseBytes, with bounded memory', () => {
    expect(report('huge-json')).toMatchObject({ outcome: 'error', errorName: 'McpProtocolError', delivered: true });
    expect(report('huge-json').message).toContain('larger than maxResponseBytes (16777216 bytes)');
    expect(server.written['/huge-json']).toBeLessThan(HOSTILE_BODY_BYTES / 4);
    expectBoundedMemory('huge-json');
  });

  it('a declared 1 GiB Content-Length is refused before the body is read', () => {
    expect(report('huge-json-length')).toMatchObject({ outcome: 'error', errorName: 'McpProtocolError', delivered: true });
    expect(report('huge-json-length').message).toContain('larger than maxResponseBytes');
    expectBoundedMemory('huge-json-length');
  });

  it('a 200 text/html page is a McpProtocolError naming the content type, its body left unread', () => {
    expect(report('html')).toMatchObject({ outcome: 'error', errorName: 'McpProtocolError', delivered: true });
    expect(report('html').message).toContain('Content-Type "text/html; charset=utf-8"');
    expect(server.written['/html']).toBeLessThan(HOSTILE_BODY_BYTES / 4);
    expectBoundedMemory('html');
  });

  it('a slow drip ends at the call deadline with McpTimeoutError', () => {
    expect(report('drip')).toMatchObject({ outcome: 'error', errorName: 'McpTimeoutError', delivered: true, timeoutMs: 2_000 });
    // It was dripping when the deadline hit: some bytes came, far fewer than a full answer.
    expect(server.written['/drip']).toBeGreaterThan(0);
  });

  it('a redirect to itself is not followed: one request, McpTransportError with status 302', () => {
    expect(report('redirect')).toMatchObject({ outcome: 'error', errorName: 'McpTransportError', status: 302, delivered: false });
    expect(server.hits['POST /redirect']).toBe(1);
  });
});
