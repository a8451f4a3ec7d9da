import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { MCP_SESSION_NOTIFIER, type McpSessionNotifier } from '../../src/mcp/interfaces/mcp-session-notifier.interface';
import { McpModule } from '../../src/mcp';
import { McpStreamRegistry } from '../../src/mcp/server/sessions/mcp-stream-registry';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { SseTools } from '../fixtures/sse/sse-tools';
import { SseReader, type SseEvent } from '../fixtures/sse/sse-reader';
import { startApp, type HttpAdapterName, type RunningApp } from '../support/http-app';
import { MCP_ACCEPT, openSession, versionHeader } from '../support/mcp-wire';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { TEST_REDIS_URL as REDIS_URL } from '../support/redis';

/** Polls `check` until it holds, failing after a deadline. */
async function until(check: () => boolean, what: string, deadlineMs = 5_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const note = (n: number) => ({
  jsonrpc: '2.0' as const,
  method: 'notifications/message',
  params: { level: 'info', data: `note ${n}` },
});

/**
 * `Last-Event-ID` on 2025 streams: a client that drops its GET stream and reconnects gets exactly
 * the notifications it missed, in order, then the live ones: from the other replica with Redis,
 * from the same process without it. A POST stream cut before its response is replayed, response
 * last, by a GET carrying the id of its last event.
 */
describe.each<[string, boolean, HttpAdapterName, HttpAdapterName]>([
  ['two replicas on Redis', true, 'express', 'express'],
  ['one process, no Redis', false, 'express', 'express'],
  ['two replicas on Redis, the second on Fastify', true, 'express', 'fastify'],
  ['one process on Fastify, no Redis', false, 'fastify', 'fastify'],
])('stream resumption (%s)', (_label, redis, adapterA, adapterB) => {
  let db: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;
  const channelPrefix = `resume-e2e-${randomBytes(6).toString('hex')}`;

  const boot = (adapter: HttpAdapterName) =>
    startApp(
      db.url,
      {
        imports: [
          McpModule.forRoot({
            auth: fixtureAuth,
            providers: [SseTools],
            ...(redis
              ? {
                  redis: REDIS_URL,
                  advanced: { pubsub: { channelPrefix } },
                  stateless: { requestStateSecret: 'a-shared-secret-of-the-test-suite' },
                }
              : {}),
          }),
        ],
        providers: [SseTools],
      },
      adapter,
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await boot(adapterA);
    b = redis ? await boot(adapterB) : a;
  });

  afterAll(async () => {
    await a?.close();
    if (b !== a) await b?.close();
    await db?.drop();
    if (redis) {
      const client = new Redis(REDIS_URL);
      const keys = await client.keys(`${channelPrefix}:*`);
      if (keys.length) await client.del(...keys);
      await client.quit();
    }
  });

  const headers = (sessionId: string, lastEventId?: string) => ({
    Authorization: 'Bearer token-alice',
    Accept: 'text/event-stream',
    'Mcp-Session-Id': sessionId,
    ...versionHeader(),
    ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}),
  });

  it('a GET stream reconnected with Last-Event-ID gets exactly the missed notifications in order, then live ones', async () => {
    const { sessionId } = await openSession(`${a.baseUrl}/mcp`);
    const notifier = a.app.get<McpSessionNotifier>(MCP_SESSION_NOTIFIER, { strict: false });
    const first = new SseReader(await fetch(`${a.baseUrl}/mcp`, { headers: headers(sessionId) }));
    const priming = await first.next();
    expect(priming).toEqual({ id: 'session_0', retry: expect.any(Number), data: '' });
    for (const n of [1, 2]) await notifier.notifySession(sessionId, note(n));
    const seen: SseEvent[] = [(await first.next())!, (await first.next())!];
    expect(seen.map((event) => event.id)).toEqual(['session_1', 'session_2']);
    expect(seen.map((event) => JSON.parse(event.data).params.data)).toEqual(['note 1', 'note 2']);

    await first.cancel();
    const registry = a.app.get(McpStreamRegistry, { strict: false });
    await until(() => !registry.has(sessionId), 'replica A noticed the dropped stream');
    for (const n of [3, 4, 5]) await notifier.notifySession(sessionId, note(n));

    const resumed = new SseReader(await fetch(`${b.baseUrl}/mcp`, { headers: headers(sessionId, 'session_2') }));
    expect(await resumed.next()).toEqual({ id: 'session_2', retry: expect.any(Number), data: '' });
    const missed = [(await resumed.next())!, (await resumed.next())!, (await resumed.next())!];
    expect(missed.map((event) => event.id)).toEqual(['session_3', 'session_4', 'session_5']);
    expect(missed.map((event) => JSON.parse(event.data).params.data)).toEqual(['note 3', 'note 4', 'note 5']);
    // Live again, from the replica that did not open the session.
    await notifier.notifySession(sessionId, note(6));
    const live = await resumed.next();
    expect(live?.id).toBe('session_6');
    expect(JSON.parse(live!.data).params.data).toBe('note 6');
    await resumed.cancel();
  });

  it('a fresh GET (no Last-Event-ID) replays nothing and numbers on from the log', async () => {
    const { sessionId } = await openSession(`${a.baseUrl}/mcp`);
    const notifier = a.app.get<McpSessionNotifier>(MCP_SESSION_NOTIFIER, { strict: false });
    await notifier.notifySession(sessionId, note(1)); // nobody listens yet
    const reader = new SseReader(await fetch(`${b.baseUrl}/mcp`, { headers: headers(sessionId) }));
    expect(await reader.next()).toEqual({ id: 'session_1', retry: expect.any(Number), data: '' });
    await notifier.notifySession(sessionId, note(2));
    const event = await reader.next();
    expect(event?.id).toBe('session_2');
    expect(JSON.parse(event!.data).params.data).toBe('note 2');
    await reader.cancel();
  });

  it('a POST stream cut before its response is replayed by GET with the id of its last event, response last', async () => {
    const { sessionId } = await openSession(`${a.baseUrl}/mcp`);
    const response = await fetch(`${a.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: 'Bearer token-alice',
        'Content-Type': 'application/json',
        Accept: MCP_ACCEPT,
        'Mcp-Session-Id': sessionId,
        ...versionHeader(),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'progress_steps', arguments: { steps: 3 }, _meta: { progressToken: 't' } },
      }),
    });
    const all = await new SseReader(response).rest();
    // Pretend the connection broke after the first progress event: resume from its id.
    const [, firstProgress, ...rest] = all;
    expect(rest).toHaveLength(3);
    const replay = await new SseReader(
      await fetch(`${b.baseUrl}/mcp`, { headers: headers(sessionId, firstProgress.id) }),
    ).rest();
    const replayed = replay.slice(1); // after the priming event
    expect(replayed.map((event) => event.id)).toEqual(rest.map((event) => event.id));
    expect(replayed.map((event) => event.data)).toEqual(rest.map((event) => event.data));
    expect(JSON.parse(replayed[2].data)).toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: { content: [{ type: 'text', text: 'done 3' }] },
    });
  });
});
