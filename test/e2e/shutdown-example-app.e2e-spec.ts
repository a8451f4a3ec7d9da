import { request as httpRequest } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive } from '../fixtures/stdio/stdio-test-kit';
import { freeLoopbackPort, spawnReady, TS_REGISTER, type ReadyChild } from '../support/child-process';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

jest.setTimeout(180_000);

const ROOT = join(__dirname, '..', '..');
/** The drain deadline the app runs with: longer than any call of the load, so every call in flight finishes. */
const DRAIN_TIMEOUT_MS = 8000;
/** How long the stdio server behind relay_echo takes to answer. */
const STDIO_DELAY_MS = 1500;
const WORKERS = 12;
const TOKEN = 'token-load';

/** One HTTP exchange as a client sees it: a status with its headers and body, or the socket error it got instead. */
type Exchange =
  { status: number; retryAfter: string | undefined; sessionId: string | undefined; body: string } | { error: string };

/** An exchange of the load, named by its JSON-RPC id. */
type Outcome = Exchange & { id: string };

/** POSTs on a connection of its own (no keep-alive reuse), so every outcome belongs to one request. */
function rawPost(url: URL, body: object, headers: Record<string, string>): Promise<Exchange> {
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          Authorization: `Bearer ${TOKEN}`,
          'Content-Length': Buffer.byteLength(payload),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'],
            sessionId: res.headers['mcp-session-id'] as string | undefined,
            body: text,
          }),
        );
        res.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    req.end(payload);
  });
}

function isRefusedConnection(outcome: Outcome): boolean {
  return 'error' in outcome && outcome.error === 'ECONNREFUSED';
}

/**
 * The example app (`src/main.ts`, on PostgreSQL) under load, then SIGTERM: twelve sessions call
 * `echo`, `slow_report` and `relay_echo` (which runs on a stdio child through the client) in a
 * loop while a probe polls readiness and a session holds its GET stream. Every request gets a
 * status (200, or 503 with Retry-After and a JSON-RPC body once the app drains; a connection
 * refused only after the listener closed), every answered call has its audit row, readiness went
 * 503 before the exit, the GET stream ended cleanly, the process exits 0, and no stdio child is left.
 */
describe('the example app drains on SIGTERM', () => {
  const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-shutdown-'));
  const pidsFile = join(workdir, 'stdio-pids');
  let db: TestDatabase;
  let app: ReadyChild | undefined;
  let url: URL;

  beforeAll(async () => {
    db = await createTestDatabase(false);
    writeFileSync(pidsFile, '');
    const serversFile = join(workdir, 'servers.json');
    const slow = {
      command: process.execPath,
      args: [join(ROOT, 'test', 'fixtures', 'stdio', 'slow-echo-server.js')],
      env: { SLOW_ECHO_PIDS: pidsFile, SLOW_ECHO_DELAY_MS: String(STDIO_DELAY_MS) },
      version: '2025-11-25',
    };
    writeFileSync(serversFile, JSON.stringify({ mcpServers: { slow } }));
    const port = await freeLoopbackPort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: db.url,
      MCP_TOKENS: `load=${TOKEN}`,
      // The readiness report (stdio processes) is for console administrators.
      MCP_CONSOLE_ADMINS: 'load',
      HOST: '127.0.0.1',
      PORT: String(port),
      MCP_SERVERS_FILE: serversFile,
      RELAY_SERVER: 'slow',
      DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS),
      THROTTLE_LIMIT: '100000',
      TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
    };
    delete env.REDIS_URL;
    app = await spawnReady(
      process.execPath,
      ['-r', TS_REGISTER, join(ROOT, 'src', 'main.ts')],
      { cwd: workdir, env },
      /MCP endpoint: (\S+) /,
    );
    url = new URL(app.ready[1]);
  });

  afterAll(async () => {
    await app?.stop(5000);
    for (const pid of readPids()) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    await db?.drop();
    rmSync(workdir, { recursive: true, force: true });
  });

  function readPids(): number[] {
    try {
      return readFileSync(pidsFile, 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  }

  it('answers every request, audits every answered call, goes unready first, ends streams and children, exits 0', async () => {
    const child = app!.child;
    let exitedAt: number | null = null;
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => ((exitedAt = Date.now()), resolve(code))),
    );
    const health = new URL('/health/ready', url);

    // Sessions, opened the way a client does.
    const sessions: string[] = [];
    for (let i = 0; i < WORKERS; i++) {
      const init = await rawPost(
        url,
        {
          jsonrpc: '2.0',
          id: `init-${i}`,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'load', version: '1.0.0' } },
        },
        {},
      );
      if (!('status' in init) || init.status !== 200 || !init.sessionId)
        throw new Error(`initialize failed: ${JSON.stringify(init)}`);
      sessions.push(init.sessionId);
      await rawPost(
        url,
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { 'Mcp-Session-Id': init.sessionId, 'MCP-Protocol-Version': '2025-11-25' },
      );
    }

    // A session's GET stream, read until the server ends it.
    const streamEnd = fetch(url, {
      headers: {
        Authorization: `Bearer ${TOKEN}`,
        Accept: 'text/event-stream',
        'Mcp-Session-Id': sessions[0],
        'MCP-Protocol-Version': '2025-11-25',
      },
    }).then(async (response) => {
      const reader = response.body!.getReader();
      try {
        for (;;) if ((await reader.read()).done) return { status: response.status, ended: 'cleanly' };
      } catch (error) {
        return { status: response.status, ended: `with ${(error as Error).message}` };
      }
    });

    // Readiness, polled until the process is gone.
    const readiness: { status: number | string; at: number }[] = [];
    const probing = (async () => {
      while (exitedAt === null) {
        const outcome = await new Promise<number | string>((resolve) => {
          const req = httpRequest(health, { agent: false }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
          req.end();
        });
        readiness.push({ status: outcome, at: Date.now() });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();

    // The load: each worker calls its tool in a loop until it meets a 503 (or the listener is gone).
    const outcomes: Outcome[] = [];
    let stopAll = false;
    const callFor = (worker: number, tag: string) => {
      const kind = worker % 3;
      if (kind === 0) return { name: 'relay_echo', arguments: { text: tag } };
      if (kind === 1) return { name: 'slow_report', arguments: { steps: 1 } };
      return { name: 'echo', arguments: { text: tag } };
    };
    const load = sessions.map(async (sessionId, worker) => {
      for (let n = 0; !stopAll; n++) {
        const id = `w${worker}-${n}`;
        const outcome = {
          id,
          ...(await rawPost(
            url,
            { jsonrpc: '2.0', id, method: 'tools/call', params: callFor(worker, id) },
            { 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' },
          )),
        };
        outcomes.push(outcome);
        if ('error' in outcome || outcome.status !== 200) return;
      }
    });

    // SIGTERM while stdio children are alive and calls of every kind are in flight.
    await pollUntil(
      'a stdio child alive and some calls answered',
      () => (readPids().some(isAlive) && outcomes.length >= WORKERS ? true : undefined),
      60_000,
    );
    // The readiness details report the stdio server's live processes (one-shot calls here, no pool).
    const details = new URL('/health/details', url);
    const stdio = await pollUntil('a readiness report with a live stdio process', async () => {
      const report = (await (await fetch(details, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()) as {
        details: { stdio: { servers: Record<string, { processes: number; pool: unknown }> } };
      };
      const slow = report.details.stdio.servers.slow;
      return slow && slow.processes >= 1 ? slow : undefined;
    });
    expect(stdio.pool).toBeNull();
    const childrenAtSigterm = readPids().filter(isAlive);
    expect(childrenAtSigterm.length).toBeGreaterThan(0);
    const sigtermAt = Date.now();
    child.kill('SIGTERM');

    const code = await Promise.race([
      exited,
      new Promise<'still running'>((resolve) =>
        setTimeout(() => resolve('still running'), DRAIN_TIMEOUT_MS + 30_000).unref(),
      ),
    ]);
    stopAll = true;
    await Promise.all(load);
    await probing;
    expect(code).toBe(0);

    // Every request got a status: 200 with a JSON-RPC response, or 503 with Retry-After and a JSON-RPC error; a refused connection only once the listener closed.
    const failures = outcomes.filter((outcome) => {
      if ('error' in outcome) return !isRefusedConnection(outcome);
      if (outcome.status === 200) return !/"jsonrpc":"2\.0"/.test(outcome.body);
      if (outcome.status === 503) return outcome.retryAfter !== '1' || !/"error":\{"code":-32000/.test(outcome.body);
      return true;
    });
    expect(failures).toEqual([]);
    const refused503 = outcomes.filter((o) => 'status' in o && o.status === 503);
    expect(refused503.length).toBeGreaterThan(0);

    // Readiness said 503 after the signal and before the process was gone.
    const first503 = readiness.find((r) => r.status === 503 && r.at >= sigtermAt);
    expect(first503).toBeDefined();
    expect(first503!.at).toBeLessThan(exitedAt!);
    expect(readiness.filter((r) => r.at < sigtermAt).every((r) => r.status === 200)).toBe(true);

    // The GET stream ended (the response finished) instead of being cut.
    expect(await streamEnd).toEqual({ status: 200, ended: 'cleanly' });

    // Every answered call has its audit row.
    const answered = outcomes
      .filter((o): o is Extract<Outcome, { status: number }> => 'status' in o && o.status === 200)
      .map((o) => o.id);
    expect(answered.length).toBeGreaterThan(WORKERS);
    const rows: { id: string }[] = await db.dataSource.query(
      `SELECT request->>'id' AS id FROM mcp_events WHERE direction = 'inbound' AND method = 'tools/call'`,
    );
    const audited = new Set(rows.map((r) => r.id));
    expect(answered.filter((id) => !audited.has(id))).toEqual([]);
    // Exactly one: the rows of the answered calls, sorted, are their ids, sorted (a duplicate fails).
    const answeredIds = new Set(answered);
    expect(answeredIds.size).toBe(answered.length);
    expect(
      rows
        .map((r) => r.id)
        .filter((id) => answeredIds.has(id))
        .sort(),
    ).toEqual([...answered].sort());
    // The relayed calls reached the stdio server: their outbound rows are there too.
    const outbound: { n: string }[] = await db.dataSource.query(
      `SELECT count(*) AS n FROM mcp_events WHERE direction = 'outbound' AND server = 'slow' AND method = 'tools/call'`,
    );
    expect(Number(outbound[0].n)).toBeGreaterThan(0);

    // No stdio child outlived the app.
    await pollUntil(
      'every stdio child gone',
      () => (readPids().every((pid) => !isAlive(pid)) ? true : undefined),
      10_000,
    );
    expect(readPids().filter(isAlive)).toEqual([]);
  });
});
