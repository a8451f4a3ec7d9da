import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import Redis from 'ioredis';
import { MCP_SESSION_NOTIFIER, type McpSessionNotifier } from '../../src/mcp/interfaces/mcp-session-notifier.interface';
import { McpModule } from '../../src/mcp';
import { McpStreamRegistry } from '../../src/mcp/server/sessions/mcp-stream-registry';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { AbortProbe, SseTools } from '../fixtures/sse/sse-tools';
import { SseReader } from '../fixtures/sse/sse-reader';
import { startApp, type RunningApp } from '../support/http-app';
import { MCP_ACCEPT, openSession, post, send, versionHeader } from '../support/mcp-wire';
import { waitUntilPast } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { TEST_REDIS_URL as REDIS_URL } from '../support/redis';

/** Polls `check` until it holds, failing after a deadline. */
async function until(check: () => boolean | Promise<boolean>, what: string, deadlineMs = 10_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * The most a loopback connection's kernel buffers can hold for a client that does not read: the
 * largest TCP send buffer plus the largest receive buffer (Linux sysctls; 256 MiB elsewhere).
 */
function socketBufferBytes(): number {
  try {
    const largest = (file: string) => Number(readFileSync(file, 'utf8').trim().split(/\s+/)[2]);
    return largest('/proc/sys/net/ipv4/tcp_wmem') + largest('/proc/sys/net/ipv4/tcp_rmem');
  } catch {
    return 256 * 1024 * 1024;
  }
}

/**
 * A session that ends closes what it holds on every replica: DELETE on replica B ends the GET
 * stream and the pending POST stream held by replica A (the handler's signal aborts); a session
 * found idle on B ends A's stream. A client that stops reading its stream has it closed once the
 * bounded buffer is full, instead of the process queueing without end.
 */
describe('session cleanup across replicas, and backpressure', () => {
  let db: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;
  const channelPrefix = `cleanup-e2e-${randomBytes(6).toString('hex')}`;

  const boot = (idleTtlMs?: number) =>
    startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [SseTools],
          redis: REDIS_URL,
          advanced: { pubsub: { channelPrefix }, streams: { maxBufferedBytes: 256 * 1024 } },
          stateless: { requestStateSecret: 'a-shared-secret-of-the-test-suite' },
          sessions: idleTtlMs ? { idleTtlMs } : undefined,
        }),
      ],
      providers: [SseTools],
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await boot();
    b = await boot();
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${channelPrefix}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  const getHeaders = (sessionId: string) => ({
    Authorization: 'Bearer token-alice',
    Accept: 'text/event-stream',
    'Mcp-Session-Id': sessionId,
    ...versionHeader(),
  });

  it('DELETE on replica B closes the GET stream and the pending POST stream that replica A holds', async () => {
    const { sessionId } = await openSession(`${a.baseUrl}/mcp`);
    const registry = a.app.get(McpStreamRegistry, { strict: false });
    const stream = new SseReader(await fetch(`${a.baseUrl}/mcp`, { headers: getHeaders(sessionId) }));
    expect((await stream.next())?.data).toBe('');

    const key = `delete-${randomBytes(4).toString('hex')}`;
    const call = await fetch(`${a.baseUrl}/mcp`, {
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
        id: 1,
        method: 'tools/call',
        params: { name: 'wait_for_abort', arguments: { key, announce: true }, _meta: { progressToken: 'p' } },
      }),
    });
    const postStream = new SseReader(call);
    expect((await postStream.next())?.data).toBe(''); // priming
    expect(JSON.parse((await postStream.next())!.data).method).toBe('notifications/progress');
    await AbortProbe.whenStarted(key);
    expect(registry.sizes.requestSessions).toBe(1);

    expect((await send(`${b.baseUrl}/mcp`, 'DELETE', { sessionId, headers: versionHeader() })).status).toBe(204);
    await expect(AbortProbe.whenAborted(key)).resolves.toBe('The session ended');
    expect(await stream.next()).toBeNull();
    expect(await postStream.rest()).toEqual([]);
    await until(
      () => registry.sizes.streams === 0 && registry.sizes.requestSessions === 0 && registry.sizes.principals === 0,
      'replica A let go of the session',
    );
  });

  it('a session found idle on replica B ends the GET stream replica A holds', async () => {
    const idleA = await boot(1_000);
    const idleB = await boot(1_000);
    try {
      const { sessionId } = await openSession(`${idleA.baseUrl}/mcp`);
      const stream = new SseReader(await fetch(`${idleA.baseUrl}/mcp`, { headers: getHeaders(sessionId) }));
      expect((await stream.next())?.data).toBe('');
      const lastUsedAt = Date.now();
      // No request uses the session: it goes idle; the first request after that (on B) finds it so.
      // (A request that found it live would be a use, and keep it alive: so wait, then ask once.)
      await waitUntilPast(lastUsedAt, 1_100);
      expect(
        (
          await post(
            `${idleB.baseUrl}/mcp`,
            { jsonrpc: '2.0', id: 1, method: 'ping' },
            { sessionId, headers: versionHeader() },
          )
        ).status,
      ).toBe(404);
      expect(await stream.next()).toBeNull();
      const registry = idleA.app.get(McpStreamRegistry, { strict: false });
      await until(() => registry.sizes.streams === 0, 'replica A let go of the stream');
    } finally {
      await idleA.close();
      await idleB.close();
    }
  });

  it('a client that stops reading its GET stream has it closed once the buffer bound is exceeded', async () => {
    const { sessionId } = await openSession(`${a.baseUrl}/mcp`);
    const port = Number(new URL(a.baseUrl).port);
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.pause(); // never reads: the kernel buffers fill, then the server's queue grows
    const headers = Object.entries(getHeaders(sessionId))
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headers}\r\n`);
    const registry = a.app.get(McpStreamRegistry, { strict: false });
    await until(() => registry.has(sessionId), 'the stream is open');

    const notifier = a.app.get<McpSessionNotifier>(MCP_SESSION_NOTIFIER, { strict: false });
    const big = 'x'.repeat(64 * 1024);
    // Each event sent is in the server's queue (256 KiB at most, plus the one that found it full)
    // or in the kernel's buffers of the connection: the stream must be closed before more than
    // that was sent. Measured: 65 events of 64 KiB.
    const most = Math.floor((socketBufferBytes() + 256 * 1024 + 64 * 1024) / (64 * 1024));
    let sent = 0;
    while (registry.has(sessionId) && sent <= most) {
      await notifier.notifySession(sessionId, {
        jsonrpc: '2.0',
        method: 'notifications/message',
        params: { level: 'info', data: big },
      });
      sent += 1;
      if (sent % 16 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(registry.has(sessionId)).toBe(false);
    expect(sent).toBeLessThanOrEqual(most);
    socket.destroy();
  });
});
