import { Agent, request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort, spawnReady, TS_REGISTER, type ReadyChild } from '../support/child-process';
import { HTTP_ADAPTERS, type HttpAdapterName } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

jest.setTimeout(240_000);

const ROOT = join(__dirname, '..', '..');
const TOKEN = 'token-keep-alive';
/** Callers, each on a keep-alive connection of its own. */
const CALLERS = 8;
/**
 * Callers whose call is still running when the drain begins: `slow_report` of ten one-second
 * steps, longer than the drain, so it is aborted at the deadline and answered during the drain.
 */
const SLOW_CALLERS = 2;
/** Calls each caller makes at most: the loops end even if the app never exits. */
const MAX_CALLS_PER_CALLER = 3000;
/** How long each caller loops at most. */
const CALLER_DEADLINE_MS = 90_000;
/** Calls answered before SIGTERM, so that every connection is a warm keep-alive one when the drain begins. */
const CALLS_BEFORE_SIGTERM = 400;
/**
 * The drain deadline of the app. The callers do not wait after a 503 (the worst client), so the
 * quiet period never comes and the drain runs to this deadline while they keep calling: both
 * edges (the drain showing on warm sockets, the listener closing under calls in flight) come
 * whatever its length, and two seconds are still hundreds of calls refused in between, each on a
 * fresh connection. It also ends well before the slow calls would (ten seconds after the first call).
 */
const DRAIN_TIMEOUT_MS = 2000;

/** One call as its caller saw it: the response, or the socket error it got instead. */
interface Outcome {
  id: string;
  /** When the request was handed to the socket (Date.now()). */
  sentAt: number;
  receivedAt: number;
  status?: number;
  retryAfter?: string;
  connection?: string;
  body?: string;
  sessionId?: string;
  error?: string;
}

/** POSTs on the caller's keep-alive agent: the socket of the previous answer is reused unless the server said `Connection: close`. */
function post(agent: Agent, url: URL, body: object, headers: Record<string, string>): Promise<Omit<Outcome, 'id'>> {
  const payload = JSON.stringify(body);
  const sentAt = Date.now();
  return new Promise((resolve) => {
    const fail = (error: NodeJS.ErrnoException) =>
      resolve({ sentAt, receivedAt: Date.now(), error: `${error.code ?? ''} ${error.message}`.trim() });
    const req = httpRequest(
      url,
      {
        method: 'POST',
        agent,
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
        res.on('error', fail);
        res.on('end', () =>
          resolve({
            sentAt,
            receivedAt: Date.now(),
            status: res.statusCode,
            retryAfter: res.headers['retry-after'],
            connection: res.headers.connection,
            sessionId: res.headers['mcp-session-id'] as string | undefined,
            body: text,
          }),
        );
      },
    );
    req.on('error', fail);
    req.end(payload);
  });
}

/** The example app on one adapter: its process, its database and its working directory. */
interface BootedApp {
  workdir: string;
  db: TestDatabase;
  app: ReadyChild;
  url: URL;
}

/** Starts the example app (`src/main.ts`) on `adapter` and `port`, on a new database; resolves once it listens. */
async function boot(adapter: HttpAdapterName, port: number): Promise<BootedApp> {
  const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-keep-alive-'));
  let db: TestDatabase | undefined;
  try {
    db = await createTestDatabase(false);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: db.url,
      MCP_TOKENS: `load=${TOKEN}`,
      HOST: '127.0.0.1',
      PORT: String(port),
      HTTP_ADAPTER: adapter,
      DRAIN_TIMEOUT_MS: String(DRAIN_TIMEOUT_MS),
      THROTTLE_LIMIT: '100000',
      TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'),
    };
    delete env.REDIS_URL;
    const app = await spawnReady(
      process.execPath,
      ['-r', TS_REGISTER, join(ROOT, 'src', 'main.ts')],
      { cwd: workdir, env },
      /MCP endpoint: (\S+) /,
    );
    return { workdir, db, app, url: new URL(app.ready[1]) };
  } catch (error) {
    await db?.drop();
    rmSync(workdir, { recursive: true, force: true });
    throw error;
  }
}

/** Stops the app (at once if it already exited), drops its database, removes its directory; harmless twice. */
async function shutDown({ workdir, db, app }: BootedApp): Promise<void> {
  await app.stop(5000);
  await db.drop();
  rmSync(workdir, { recursive: true, force: true });
}

/**
 * Both apps boot side by side before the first test: a boot is a child process that transpiles,
 * starts Nest and migrates its database, most of a test's time, and an idle app does not disturb
 * the other's test. Each test still loads and stops only its own app; a boot that fails fails only
 * its adapter's test (its describe awaits it).
 */
const boots = new Map<HttpAdapterName, Promise<BootedApp>>();

beforeAll(async () => {
  // Distinct ports: two random picks, each free right now, could still be the same one.
  const ports: number[] = [];
  while (ports.length < HTTP_ADAPTERS.length) {
    const port = await freeLoopbackPort();
    if (!ports.includes(port)) ports.push(port);
  }
  HTTP_ADAPTERS.forEach((adapter, index) => {
    const booting = boot(adapter, ports[index]);
    // Awaited, and its failure reported, by the adapter's describe.
    booting.catch(() => undefined);
    boots.set(adapter, booting);
  });
});

afterAll(async () => {
  // The apps a describe did not stop (its test was filtered out, or its beforeAll failed).
  await Promise.all([...boots.values()].map((booting) => booting.then(shutDown, () => undefined)));
});

/**
 * The example app (`src/main.ts`, on PostgreSQL) on each HTTP adapter, under eight callers that
 * loop `tools/call` on keep-alive connections, then SIGTERM. A caller that meets a reset cannot
 * know whether its tool ran, so none may: every call gets a response (served, with its audit
 * row, or 503 with Retry-After and a JSON-RPC error) or, once the listener is gone, a refused
 * connection (nothing was sent); and every response to a request sent after the drain showed
 * carries `Connection: close`, so no caller reuses a socket the server is about to close.
 */
describe.each(HTTP_ADAPTERS)('SIGTERM under keep-alive load: no connection is reset (%s)', (adapter) => {
  let booted: BootedApp | undefined;
  let db: TestDatabase;
  let app: ReadyChild | undefined;
  let url: URL;
  const agents = Array.from({ length: CALLERS }, () => new Agent({ keepAlive: true, maxSockets: 1 }));

  beforeAll(async () => {
    booted = await boots.get(adapter)!;
    ({ db, app, url } = booted);
  });

  afterAll(async () => {
    for (const agent of agents) agent.destroy();
    if (booted) await shutDown(booted);
  });

  it('answers every call (served and audited, or 503 with Retry-After), closes each socket only after its answer, exits 0', async () => {
    const child = app!.child;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

    const sessions: string[] = [];
    for (const agent of agents) {
      const init = await post(
        agent,
        url,
        {
          jsonrpc: '2.0',
          id: 'init',
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'keep-alive', version: '1.0.0' },
          },
        },
        {},
      );
      if (init.status !== 200 || !init.sessionId) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
      sessions.push(init.sessionId);
      await post(
        agent,
        url,
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { 'Mcp-Session-Id': init.sessionId, 'MCP-Protocol-Version': '2025-11-25' },
      );
    }

    const outcomes: Outcome[] = [];
    const callerDeadline = Date.now() + CALLER_DEADLINE_MS;
    const callers = agents.map(async (agent, caller) => {
      for (let n = 0; n < MAX_CALLS_PER_CALLER && Date.now() < callerDeadline; n++) {
        const id = `c${caller}-${n}`;
        const params =
          caller < SLOW_CALLERS
            ? { name: 'slow_report', arguments: { steps: 10 } }
            : { name: 'echo', arguments: { text: id } };
        const outcome = {
          id,
          ...(await post(
            agent,
            url,
            { jsonrpc: '2.0', id, method: 'tools/call', params },
            { 'Mcp-Session-Id': sessions[caller], 'MCP-Protocol-Version': '2025-11-25' },
          )),
        };
        outcomes.push(outcome);
        // A refused connection means the listener is gone; any other error is a failure the assertions report.
        if (outcome.error) return;
      }
    });

    // The slow calls cannot end before the drain aborts them: SIGTERM comes while they run.
    await pollUntil(
      'calls answered on warm keep-alive connections',
      () => (outcomes.length >= CALLS_BEFORE_SIGTERM ? true : undefined),
      60_000,
    );
    expect(outcomes.filter((o) => Number(o.id.slice(1, o.id.indexOf('-'))) < SLOW_CALLERS)).toEqual([]);
    const sigtermAt = Date.now();
    child.kill('SIGTERM');
    const code = await Promise.race([
      exited,
      new Promise<'still running'>((resolve) =>
        setTimeout(() => resolve('still running'), DRAIN_TIMEOUT_MS + 60_000).unref(),
      ),
    ]);
    await Promise.all(callers);
    expect(code).toBe(0);

    const afterSignal = outcomes.filter((o) => o.sentAt >= sigtermAt);
    const resets = outcomes.filter((o) => o.error && !o.error.startsWith('ECONNREFUSED'));
    const unexpected = outcomes.filter((o) => {
      if (o.error) return false;
      if (o.status === 200) return !/"result":\{/.test(o.body ?? '');
      if (o.status === 503) return o.retryAfter !== '1' || !/"error":\{"code":-32000/.test(o.body ?? '');
      return true;
    });
    const drainSeenAt = Math.min(...outcomes.filter((o) => o.status === 503).map((o) => o.receivedAt));
    const keptAlive = outcomes.filter((o) => !o.error && o.sentAt > drainSeenAt && o.connection !== 'close');
    const summary = {
      adapter,
      calls: outcomes.length,
      afterSignal: afterSignal.length,
      refused503: outcomes.filter((o) => o.status === 503).length,
    };
    expect({ ...summary, resets: resets.map((o) => `${o.id}: ${o.error}`) }).toEqual({ ...summary, resets: [] });
    expect(
      unexpected.map((o) => ({ id: o.id, status: o.status, retryAfter: o.retryAfter, body: o.body?.slice(0, 200) })),
    ).toEqual([]);
    expect(summary.refused503).toBeGreaterThan(0);
    expect(keptAlive.map((o) => ({ id: o.id, status: o.status, connection: o.connection }))).toEqual([]);
    // The slow calls were answered during the drain (the tool stopped at its signal), and that answer closed their connection too.
    const slow = outcomes.filter((o) => /"Report stopped at step/.test(o.body ?? ''));
    expect(slow.map((o) => ({ status: o.status, connection: o.connection }))).toEqual(
      Array.from({ length: SLOW_CALLERS }, () => ({ status: 200, connection: 'close' })),
    );

    // Every served call has its audit row.
    const served = outcomes.filter((o) => o.status === 200).map((o) => o.id);
    expect(served.length).toBeGreaterThanOrEqual(CALLS_BEFORE_SIGTERM);
    const rows: { id: string }[] = await db.dataSource.query(
      `SELECT request->>'id' AS id FROM mcp_events WHERE direction = 'inbound' AND method = 'tools/call'`,
    );
    const audited = new Set(rows.map((r) => r.id));
    expect(served.filter((id) => !audited.has(id))).toEqual([]);
  });
});
