import { Client } from 'pg';
import { McpModule } from '../../src/mcp';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { HTTP_ADAPTERS } from '../support/http-app';
import { callRequest, initializeRequest, openSession, post, versionHeader } from '../support/mcp-wire';
import { startFaultApp, type FaultApp } from './support/fault-app';
import { pollUntil } from './support/free-port';
import { startLoad, type LoadAnswer } from './support/load-driver';
import { startPrivatePostgres, type PrivatePostgres } from './support/private-postgres';

/**
 * The bound the app is configured with: every database operation gives up after this long. Each
 * stalled case waits it out twice (two requests per caller) and the stop lasts longer than three
 * times it, so it is kept short; a database that answers takes a few tens of milliseconds here (a
 * few hundred at worst on a loaded machine), far inside it. It stays under the pool's own
 * connection timeout (`FAULT_POOL`, 2 s), so the deadline that answers is the module's.
 */
const DATABASE_TIMEOUT_MS = 1000;
const CALLERS = 8;
/**
 * What "503 after database.timeoutMs at most" is held to: three times the configured deadline
 * plus 2 s for a starved machine. A request that waited for the database without a deadline
 * would exceed it by far; this is a correctness bound, not a speed target.
 */
const ANSWER_BOUND_MS = DATABASE_TIMEOUT_MS * 3 + 2_000;
/** How long the database stays stopped: longer than the bound, so a request that waited for it would cross the bound before the restart. */
const STOPPED_MS = ANSWER_BOUND_MS + 1_500;

/** The JSON-RPC body of a 503: an error object with -32603 and no result. */
function isUnavailableAnswer(answer: LoadAnswer): boolean {
  const body = answer.json as
    { jsonrpc?: string; error?: { code?: number; message?: string }; result?: unknown } | undefined;
  return (
    answer.status === 503 &&
    body?.jsonrpc === '2.0' &&
    body.error?.code === -32603 &&
    typeof body.error.message === 'string' &&
    body.result === undefined
  );
}

/** Answers that took longer than ANSWER_BOUND_MS from the moment their request was sent. */
function slowAnswers(answers: LoadAnswer[]): string[] {
  return answers
    .filter((a) => a.endedAt - a.startedAt > ANSWER_BOUND_MS)
    .map((a) => `${a.tag ?? a.index}: ${a.status} after ${a.endedAt - a.startedAt} ms`);
}

function describeAnswers(answers: LoadAnswer[]): string {
  const counts = new Map<string, number>();
  for (const a of answers)
    counts.set(
      `${a.status} ${a.status === 200 ? '' : a.body.slice(0, 160)}`,
      (counts.get(`${a.status} ${a.status === 200 ? '' : a.body.slice(0, 160)}`) ?? 0) + 1,
    );
  return [...counts].map(([k, n]) => `${n} x ${k}`).join('\n');
}

/**
 * The private cluster both adapters' apps run on, one after the other (each describe closes its
 * apps before the next one boots its own). The request ids of each describe start with its
 * adapter, so that the audit rows of one are never counted for the other.
 */
let pg: PrivatePostgres;

beforeAll(async () => {
  pg = await startPrivatePostgres();
}, 60_000);

afterAll(async () => {
  await pg?.destroy();
});

/**
 * PostgreSQL stopped or stalled under load: every request is answered (503 with a JSON-RPC body
 * while the database is away, never a dropped connection or Nest's generic 500), the process
 * stays up, service resumes by itself, and every call answered 200 has its audit row.
 */
describe.each(HTTP_ADAPTERS)('PostgreSQL outage under load (%s)', (adapter) => {
  let server: FaultApp;
  let url: string;
  const sessions: string[] = [];
  /** A second app on the same database without the session cache: every request looks its session up. */
  let uncachedServer: FaultApp;
  let uncachedUrl: string;
  const uncachedSessions: string[] = [];

  /** Opens `CALLERS` sessions on the endpoint, all at once. */
  async function openSessions(endpoint: string): Promise<string[]> {
    return Promise.all(Array.from({ length: CALLERS }, async () => (await openSession(endpoint)).sessionId));
  }

  /** An app on the private cluster whose database operations give up after DATABASE_TIMEOUT_MS, its session cache on or off. */
  function startOutageApp(sessionCache: boolean): Promise<FaultApp> {
    return startFaultApp(
      pg.url,
      {
        imports: [
          McpModule.forRoot({
            auth: fixtureAuth,
            providers: [FixtureTools],
            advanced: { database: { timeoutMs: DATABASE_TIMEOUT_MS } },
            ...(sessionCache ? {} : { sessions: { cache: false } }),
          }),
        ],
        providers: [FixtureTools],
      },
      adapter,
    );
  }

  beforeAll(async () => {
    // The two apps boot side by side: they share nothing but the database.
    [server, uncachedServer] = await Promise.all([startOutageApp(true), startOutageApp(false)]);
    url = `${server.baseUrl}/mcp`;
    uncachedUrl = `${uncachedServer.baseUrl}/mcp`;
    const [opened, uncachedOpened] = await Promise.all([openSessions(url), openSessions(uncachedUrl)]);
    sessions.push(...opened);
    uncachedSessions.push(...uncachedOpened);
  }, 60_000);

  afterAll(async () => {
    if (process.env.FAULTS_DEBUG)
      console.log([...new Set(server?.logger.lines.map((l) => `${l.level} ${l.context}: ${l.message}`))].join('\n'));
    await Promise.all([server?.close().catch(() => undefined), uncachedServer?.close().catch(() => undefined)]);
  });

  /** Caller i calls `echo` on its own session, with a request id that names the call (and the adapter). */
  const callOnSession =
    (run: string, cached = true) =>
    async (index: number, caller: number) => {
      const id = `${adapter}-${run}-${caller}-${index}`;
      const reply = await post(cached ? url : uncachedUrl, callRequest(id, 'echo', { text: id }), {
        sessionId: (cached ? sessions : uncachedSessions)[caller],
        headers: versionHeader(),
      });
      return { status: reply.status, body: reply.text, tag: id };
    };

  async function expectServiceBack(run: string, cached = true): Promise<void> {
    await pollUntil(
      'a tools/call answered 200 after the database came back',
      async () => {
        const reply = await post(cached ? url : uncachedUrl, callRequest(`${run}-probe`, 'echo', { text: 'back' }), {
          sessionId: (cached ? sessions : uncachedSessions)[0],
          headers: versionHeader(),
        });
        return reply.status === 200 && reply.json?.result ? true : undefined;
      },
      30_000,
      200,
    );
  }

  /**
   * Each call answered 200 has exactly one audit row: the ids of the rows, sorted, are the ids of
   * those calls, sorted, so a missing row and a duplicate both fail. Returns how many there were.
   */
  async function expectRowsFor(answers: LoadAnswer[]): Promise<number> {
    const ids = answers.filter((a) => a.status === 200).map((a) => a.tag as string);
    expect(new Set(ids).size).toBe(ids.length);
    const rows: { id: string }[] = await pg.dataSource.query(
      `SELECT request->>'id' AS id FROM mcp_events WHERE request->>'id' = ANY($1)`,
      [ids],
    );
    expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    return ids.length;
  }

  it(`stopped for ${STOPPED_MS / 1000} s: every answer is 200 or a 503 with a JSON-RPC body within the bound, and service comes back by itself`, async () => {
    const load = startLoad({ concurrency: CALLERS, durationMs: 60_000, pauseMs: 10 }, callOnSession('stop'));
    await pollUntil('answers before the outage', async () =>
      load.answers.filter((a) => a.status === 200).length >= CALLERS * 2 ? true : undefined,
    );
    const stoppedAt = Date.now();
    await pg.stop();
    await new Promise((resolve) => setTimeout(resolve, STOPPED_MS));
    const restartingAt = Date.now();
    await pg.start();
    await pollUntil(
      'calls answered 200 after the restart',
      async () =>
        load.answers.filter((a) => a.status === 200 && a.startedAt > restartingAt).length >= CALLERS ? true : undefined,
      30_000,
    );
    const answers = await load.stop();

    const outage = answers.filter((a) => a.startedAt >= stoppedAt && a.endedAt <= restartingAt);
    const unexpected = answers.filter((a) => a.status !== 200 && !isUnavailableAnswer(a));
    expect(describeAnswers(unexpected)).toBe('');
    expect(answers.filter((a) => a.status === 0)).toEqual([]);
    expect(outage.length).toBeGreaterThan(0);
    expect(outage.filter((a) => !isUnavailableAnswer(a))).toEqual([]);
    // Every request alive while the database was stopped was answered within the bound, counted
    // from when it was sent or, for one in flight when the database stopped, from the stop. One
    // still running when the restart began is counted up to then (pg_ctl start blocks this
    // process's loop): having waited past the bound by then is the failure, whenever it ends.
    const duringStop = answers.filter((a) => a.endedAt >= stoppedAt && a.startedAt < restartingAt);
    const waited = duringStop
      .map((a) => ({ a, ms: Math.min(a.endedAt, restartingAt) - Math.max(a.startedAt, stoppedAt) }))
      .filter(({ ms }) => ms > ANSWER_BOUND_MS)
      .map(({ a, ms }) => `${a.tag}: ${a.status} after ${ms} ms`);
    expect(waited).toEqual([]);
    // The polls above saw at least two calls per caller answered before the stop and one after the restart.
    expect(await expectRowsFor(answers)).toBeGreaterThanOrEqual(CALLERS * 3);
    // The process is alive and serves new sessions too.
    const fresh = await openSession(url);
    const call = await post(url, callRequest('after-stop', 'echo', { text: 'alive' }), {
      sessionId: fresh.sessionId,
      headers: versionHeader(),
    });
    expect(call.status).toBe(200);
    expect(call.json.result.content).toEqual([{ type: 'text', text: 'alive' }]);
    // One line per distinct failure per window, not one per request.
    expect(server.logger.repeatsWithin(10_000)).toEqual([]);
  }, 120_000);

  it.each([
    ['mcp_events', 'the audit rows cannot be written', true],
    ['mcp_inbound_sessions', 'sessions cannot be looked up (sessions.cache: false)', false],
  ])(
    'stalled (%s locked by another connection: %s): every answer is a 503 with a JSON-RPC body, then service resumes',
    async (table, _what, cached) => {
      const locker = new Client({ connectionString: pg.url });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
        // The table is locked before the first request is sent: each request meets a stalled
        // database the app has not noticed yet, so its own send time starts its clock.
        const answers = await startLoad(
          { concurrency: CALLERS, requests: CALLERS * 2 },
          callOnSession(`lock-${table}`, cached),
        ).done;
        expect(answers).toHaveLength(CALLERS * 2);
        expect(describeAnswers(answers.filter((a) => !isUnavailableAnswer(a)))).toBe('');
        expect(slowAnswers(answers)).toEqual([]);
        await locker.query('COMMIT');
      } finally {
        await locker.end().catch(() => undefined);
      }
      await expectServiceBack(`lock-${table}`, cached);
      const after = await startLoad(
        { concurrency: CALLERS, requests: CALLERS },
        callOnSession(`after-lock-${table}`, cached),
      ).done;
      expect(describeAnswers(after.filter((a) => a.status !== 200))).toBe('');
      expect(await expectRowsFor(after)).toBe(CALLERS);
    },
    120_000,
  );

  it('stalled (mcp_inbound_sessions locked, with the session cache): sessions held in memory are served with their audit rows; initialize answers 503', async () => {
    // Every caller's session was just used, so this replica holds it in memory.
    const warm = await startLoad({ concurrency: CALLERS, requests: CALLERS }, callOnSession('warm')).done;
    expect(describeAnswers(warm.filter((a) => a.status !== 200))).toBe('');
    const locker = new Client({ connectionString: pg.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE mcp_inbound_sessions IN ACCESS EXCLUSIVE MODE');
      const answers = await startLoad({ concurrency: CALLERS, requests: CALLERS * 2 }, callOnSession('cached-lock'))
        .done;
      expect(answers).toHaveLength(CALLERS * 2);
      expect(describeAnswers(answers.filter((a) => a.status !== 200 && !isUnavailableAnswer(a)))).toBe('');
      expect(slowAnswers(answers)).toEqual([]);
      expect(await expectRowsFor(answers)).toBe(CALLERS * 2);
      // A new session needs the table: refused within the database bound, not hanging.
      const initializeSentAt = Date.now();
      const initialize = await post(url, initializeRequest('init-locked'));
      expect(Date.now() - initializeSentAt).toBeLessThanOrEqual(ANSWER_BOUND_MS);
      expect(initialize.status).toBe(503);
      expect(initialize.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32603 } });
      await locker.query('COMMIT');
    } finally {
      await locker.end().catch(() => undefined);
    }
    await expectServiceBack('cached-lock');
  }, 120_000);

  it('stalled (the postmaster frozen with SIGSTOP, the pool emptied): new connections hang, every answer is a 503 with a JSON-RPC body, then service resumes', async () => {
    // Cut the app's pooled connections first, so every request needs a new one from the frozen postmaster.
    await pg.dataSource.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'test' AND pid <> pg_backend_pid()`,
    );
    pg.freeze();
    let answers: LoadAnswer[];
    try {
      answers = await startLoad({ concurrency: CALLERS, requests: CALLERS * 2 }, callOnSession('freeze')).done;
    } finally {
      pg.thaw();
    }
    expect(answers).toHaveLength(CALLERS * 2);
    expect(describeAnswers(answers.filter((a) => !isUnavailableAnswer(a)))).toBe('');
    // Frozen before the first request: each one's clock starts when it is sent.
    expect(slowAnswers(answers)).toEqual([]);
    await expectServiceBack('freeze');
    const after = await startLoad({ concurrency: CALLERS, requests: CALLERS }, callOnSession('after-freeze')).done;
    expect(describeAnswers(after.filter((a) => a.status !== 200))).toBe('');
    expect(await expectRowsFor(after)).toBe(CALLERS);
  }, 120_000);
});
