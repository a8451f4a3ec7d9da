import { randomBytes } from 'node:crypto';
import { mcpServerStores, MCP_SESSION_STORE, type McpInboundSessionRecord } from '../../src/mcp/stores';
import { McpModule, type McpModuleOptions, type McpPrincipal } from '../../src/mcp';
import { TypeOrmSessionStore } from '../../src/mcp/persistence/typeorm/typeorm-session.store';
import { McpSessionBus } from '../../src/mcp/server/sessions/mcp-session-bus';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { SseTools } from '../fixtures/sse/sse-tools';
import { startPrivateRedis, type PrivateRedis } from '../faults/support/private-redis';
import { startApp, type RunningApp } from '../support/http-app';
import { callRequest, openSession, post, send, versionHeader } from '../support/mcp-wire';
import { pollUntil, waitUntilPast } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';

const SECRET = 'a-shared-secret-of-the-cache-suite';
/** Far longer than any wait of this suite: with it, only the bus can make a replica drop a session. */
const LONG_TTL_MS = 10 * 60_000;

/** The TypeORM store, counting what the session cache asks of it. */
class CountingSessionStore extends TypeOrmSessionStore {
  readonly finds: string[] = [];
  readonly touches: string[][] = [];

  override find(sessionId: string, principal: McpPrincipal): Promise<McpInboundSessionRecord | null> {
    this.finds.push(sessionId);
    return super.find(sessionId, principal);
  }

  override touch(sessions: McpInboundSessionRecord[], seenAt: Date): Promise<void> {
    this.touches.push(sessions.map((session) => session.sessionId));
    return super.touch(sessions, seenAt);
  }
}

const storeOf = (replica: RunningApp) => replica.app.get<CountingSessionStore>(MCP_SESSION_STORE, { strict: false });
const findsOf = (replica: RunningApp, sessionId: string) =>
  storeOf(replica).finds.filter((id) => id === sessionId).length;
const touchesOf = (replica: RunningApp, sessionId: string) =>
  storeOf(replica).touches.filter((batch) => batch.includes(sessionId)).length;

/** One `progress_steps` call with an SSE-capable Accept: returns the status and the log messages it carried. */
async function callWithLogs(url: string, sessionId: string, id: string): Promise<{ status: number; logs: number }> {
  const reply = await post(url, callRequest(id, 'progress_steps', { steps: 1 }), {
    sessionId,
    headers: versionHeader(),
  });
  return { status: reply.status, logs: (reply.text.match(/"method":"notifications\/message"/g) ?? []).length };
}

/**
 * The session cache across two replicas on one database: each replica serves the sessions it has
 * read from memory, and what ends or changes a session on one replica reaches the other over the
 * session bus (or, with the bus down, once the cache TTL passed).
 */
describe('session cache across replicas (PostgreSQL + Redis pub/sub)', () => {
  let db: TestDatabase;
  const started: RunningApp[] = [];
  const prefixes: string[] = [];

  const boot = async (
    options: Partial<McpModuleOptions>,
    redis = TEST_REDIS_URL,
    channelPrefix = `cache-e2e-${randomBytes(6).toString('hex')}`,
  ): Promise<RunningApp> => {
    prefixes.push(channelPrefix);
    const replica = await startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [SseTools],
          stores: mcpServerStores({ sessions: CountingSessionStore }),
          redis,
          advanced: { pubsub: { channelPrefix } },
          stateless: { requestStateSecret: SECRET },
          ...options,
        }),
      ],
      providers: [SseTools],
    });
    started.push(replica);
    return replica;
  };

  /** Two replicas on one bus. */
  const pair = async (
    options: Partial<McpModuleOptions>,
    redis = TEST_REDIS_URL,
  ): Promise<[RunningApp, RunningApp]> => {
    const channelPrefix = `cache-e2e-${randomBytes(6).toString('hex')}`;
    return [await boot(options, redis, channelPrefix), await boot(options, redis, channelPrefix)];
  };

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    for (const replica of started) await replica.close().catch(() => undefined);
    await deleteRedisKeys(...prefixes.map((prefix) => `${prefix}*`));
    await db?.drop();
  });

  describe('with the bus up (cache TTL 10 min)', () => {
    let a: RunningApp;
    let b: RunningApp;

    beforeAll(async () => {
      [a, b] = await pair({ sessions: { cache: { ttlMs: LONG_TTL_MS } } });
    });

    it('B serves a session from memory after one read; a DELETE on A makes B answer 404 (the bus, not the TTL)', async () => {
      const { sessionId } = await openSession(`${a.baseUrl}/mcp`);
      for (let i = 0; i < 5; i++)
        expect((await callWithLogs(`${b.baseUrl}/mcp`, sessionId, `b-${i}`)).status).toBe(200);
      expect(findsOf(b, sessionId)).toBe(1);

      expect((await send(`${a.baseUrl}/mcp`, 'DELETE', { sessionId })).status).toBe(204);
      const gone = await pollUntil('B answers 404 for the session A deleted', async () => {
        const reply = await post(`${b.baseUrl}/mcp`, callRequest('after-delete', 'progress_steps', { steps: 1 }), {
          sessionId,
          headers: versionHeader(),
        });
        return reply.status === 200 ? undefined : reply;
      });
      expect(gone.status).toBe(404);
      expect(gone.json).toMatchObject({ jsonrpc: '2.0', error: { message: 'Session not found' } });
      // B asked the store once more, when the bus had dropped its copy (the cache lives 10 min):
      // the store said "not found".
      expect(findsOf(b, sessionId)).toBe(2);
    });

    it('logging/setLevel on A is honoured by B, which had the session in memory with no level', async () => {
      const { sessionId } = await openSession(`${a.baseUrl}/mcp`);
      expect(await callWithLogs(`${b.baseUrl}/mcp`, sessionId, 'before-level')).toEqual({ status: 200, logs: 0 });
      const setLevel = await post(
        `${a.baseUrl}/mcp`,
        { jsonrpc: '2.0', id: 'level', method: 'logging/setLevel', params: { level: 'debug' } },
        { sessionId, headers: versionHeader() },
      );
      expect(setLevel.json).toEqual({ jsonrpc: '2.0', id: 'level', result: {} });
      const after = await pollUntil('B sends the log messages the new level asks for', async () => {
        const call = await callWithLogs(`${b.baseUrl}/mcp`, sessionId, 'after-level');
        return call.logs > 0 ? call : undefined;
      });
      // One step logs once at info and once at debug: both pass a debug level.
      expect(after).toEqual({ status: 200, logs: 2 });
    });

    it('another principal presenting a cached session id gets the 404 of an unknown id, and the owner keeps the session', async () => {
      const { sessionId } = await openSession(`${b.baseUrl}/mcp`);
      expect((await callWithLogs(`${b.baseUrl}/mcp`, sessionId, 'owner')).status).toBe(200);
      const asBob = await post(`${b.baseUrl}/mcp`, callRequest('bob', 'whoami'), {
        token: 'token-bob',
        sessionId,
        headers: versionHeader(),
      });
      const unknown = await post(`${b.baseUrl}/mcp`, callRequest('bob', 'whoami'), {
        token: 'token-bob',
        sessionId: 'no-such-session-0123456789abcdef',
        headers: versionHeader(),
      });
      expect(asBob.status).toBe(404);
      expect(asBob.text).toBe(unknown.text);
      expect((await callWithLogs(`${b.baseUrl}/mcp`, sessionId, 'owner-again')).status).toBe(200);
    });
  });

  describe('with the bus losing messages (the two replicas on different channels of a healthy Redis)', () => {
    it('a DELETE on A is refused on B once the cache TTL passed: the TTL bounds a bus that fails silently', async () => {
      const options = { sessions: { cache: { ttlMs: 1500 } } };
      const a = await boot(options);
      const b = await boot(options); // its own channel prefix: nothing A publishes reaches it
      const { sessionId } = await openSession(`${a.baseUrl}/mcp`);
      expect((await callWithLogs(`${b.baseUrl}/mcp`, sessionId, 'cached')).status).toBe(200);
      expect(findsOf(b, sessionId)).toBe(1);
      expect((await send(`${a.baseUrl}/mcp`, 'DELETE', { sessionId })).status).toBe(204);

      const gone = await pollUntil('B answers 404 once its copy expired', async () => {
        const reply = await post(`${b.baseUrl}/mcp`, callRequest('after-delete', 'progress_steps', { steps: 1 }), {
          sessionId,
          headers: versionHeader(),
        });
        return reply.status === 200 ? undefined : reply;
      });
      expect(gone.status).toBe(404);
      // The 404 came from a second store read, which B only makes once its copy's TTL ran out.
      expect(findsOf(b, sessionId)).toBe(2);
    });
  });

  describe('with the Redis of the bus down (cache TTL 10 min)', () => {
    let redis: PrivateRedis;
    let redisDown = false;
    let a: RunningApp;
    let b: RunningApp;

    beforeAll(async () => {
      redis = await startPrivateRedis();
      [a, b] = await pair({ sessions: { cache: { ttlMs: LONG_TTL_MS } } }, redis.url);
    });

    afterAll(async () => {
      // Bring Redis back (if the test did not) so the replicas close their connections cleanly.
      if (redisDown) await redis?.start().catch(() => undefined);
      for (const replica of [a, b]) {
        started.splice(started.indexOf(replica), 1);
        await replica?.close().catch(() => undefined);
      }
      await redis?.destroy();
    });

    it('B stops serving from memory while its subscription is down (a DELETE on A is refused at once), and forgets everything when it is back', async () => {
      const { sessionId } = await openSession(`${a.baseUrl}/mcp`);
      expect((await callWithLogs(`${b.baseUrl}/mcp`, sessionId, 'cached')).status).toBe(200);
      const kept = (await openSession(`${b.baseUrl}/mcp`)).sessionId;
      expect(findsOf(b, kept)).toBe(0);
      await redis.kill();
      redisDown = true;

      // The row is ended first; telling the other replicas then fails (503, as documented for the bus).
      expect([204, 503]).toContain((await send(`${a.baseUrl}/mcp`, 'DELETE', { sessionId })).status);
      const [row] = await db.dataSource.query(`SELECT terminated_at FROM mcp_inbound_sessions WHERE session_id = $1`, [
        sessionId,
      ]);
      expect(row.terminated_at).toBeInstanceOf(Date);
      // No message can cross and the TTL is 10 min: only B noticing its bus is down explains the 404.
      const gone = await pollUntil('B answers 404 for the session A deleted', async () => {
        const reply = await post(`${b.baseUrl}/mcp`, callRequest('after-delete', 'progress_steps', { steps: 1 }), {
          sessionId,
          headers: versionHeader(),
        });
        return reply.status === 200 ? undefined : reply;
      });
      expect(gone.status).toBe(404);

      // Back up: B dropped what it held (ends sent meanwhile were lost), so its own session is read again once.
      await redis.start();
      redisDown = false;
      await pollUntil('B listening on its bus again', () =>
        b.app.get(McpSessionBus, { strict: false }).listening ? true : undefined,
      );
      const findsBefore = findsOf(b, kept);
      expect((await callWithLogs(`${b.baseUrl}/mcp`, kept, 'after-redis')).status).toBe(200);
      expect((await callWithLogs(`${b.baseUrl}/mcp`, kept, 'after-redis-2')).status).toBe(200);
      expect(findsOf(b, kept)).toBe(findsBefore + 1);
    });
  });

  describe('sessions.cache: false', () => {
    it('every request of a session asks the store, where the cache asks it at most once per TTL', async () => {
      const uncached = await boot({ sessions: { cache: false } });
      const cached = await boot({ sessions: { cache: { ttlMs: LONG_TTL_MS } } });
      for (const replica of [uncached, cached]) {
        const { sessionId } = await openSession(`${replica.baseUrl}/mcp`);
        for (let i = 0; i < 10; i++)
          expect((await callWithLogs(`${replica.baseUrl}/mcp`, sessionId, `call-${i}`)).status).toBe(200);
      }
      // 11 requests after initialize (notifications/initialized and ten calls).
      const uncachedSession = storeOf(uncached).finds[0];
      expect(findsOf(uncached, uncachedSession)).toBe(11);
      // The replica that opened the session keeps it in memory from initialize on.
      expect(storeOf(cached).finds).toEqual([]);
    });
  });

  describe('last_seen_at refreshes', () => {
    it('many requests on one session within a touch interval refresh last_seen_at at most once, and touches of many sessions share one write', async () => {
      const replica = await boot({ sessions: { cache: { ttlMs: LONG_TTL_MS } } });
      const url = `${replica.baseUrl}/mcp`;
      const sessions: string[] = [];
      for (let i = 0; i < 8; i++) sessions.push((await openSession(url)).sessionId);
      const openedAt = Date.now();
      // The default idle TTL (one hour) gives a touch interval of one second.
      await waitUntilPast(openedAt, 1000);

      const burstStartedAt = Date.now();
      for (let i = 0; i < 30; i++) expect((await callWithLogs(url, sessions[0], `burst-${i}`)).status).toBe(200);
      const burstMs = Date.now() - burstStartedAt;
      // At most one refresh per started second of the burst, never one per request.
      expect(touchesOf(replica, sessions[0])).toBeGreaterThanOrEqual(1);
      expect(touchesOf(replica, sessions[0])).toBeLessThanOrEqual(Math.floor(burstMs / 1000) + 1);
      const [row] = await db.dataSource.query(
        `SELECT last_seen_at, created_at FROM mcp_inbound_sessions WHERE session_id = $1`,
        [sessions[0]],
      );
      expect(new Date(row.last_seen_at).getTime()).toBeGreaterThan(new Date(row.created_at).getTime());

      // Every session used at once: each is refreshed once, several in one write.
      const batchesBefore = storeOf(replica).touches.length;
      await Promise.all(sessions.slice(1).map((sessionId, i) => callWithLogs(url, sessionId, `together-${i}`)));
      await pollUntil('the touches of the seven sessions', () =>
        sessions.slice(1).every((id) => touchesOf(replica, id) === 1) ? true : undefined,
      );
      const batches = storeOf(replica).touches.slice(batchesBefore);
      expect(batches.flat().sort()).toEqual(sessions.slice(1).sort());
      expect(batches.length).toBeLessThan(7);
    });

    it('a session kept busy on replica B past the idle TTL stays alive on replica A', async () => {
      const IDLE_TTL_MS = 2000;
      // A long cache TTL: B never reads the session again, so only its touches keep last_seen_at fresh.
      const [a, b] = await pair({ sessions: { idleTtlMs: IDLE_TTL_MS, cache: { ttlMs: LONG_TTL_MS } } });
      const openedAt = Date.now();
      const { sessionId } = await openSession(`${a.baseUrl}/mcp`);
      const statuses: number[] = [];
      while (Date.now() - openedAt < IDLE_TTL_MS + 1000) {
        statuses.push((await callWithLogs(`${b.baseUrl}/mcp`, sessionId, `busy-${statuses.length}`)).status);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(statuses.every((status) => status === 200)).toBe(true);
      expect(findsOf(b, sessionId)).toBe(1);
      // A last used the session at initialize, more than the idle TTL ago: it asks the database, which B kept fresh.
      expect((await callWithLogs(`${a.baseUrl}/mcp`, sessionId, 'on-a')).status).toBe(200);
      expect(findsOf(a, sessionId)).toBe(1);
    });
  });
});
