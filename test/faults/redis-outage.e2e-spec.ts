import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { McpClientModule, McpClientService, McpModule } from '../../src/mcp';
import { McpCallWaitTimeoutError, McpQueueUnavailableError } from '../../src/mcp/errors';
import { BullCallQueue } from '../../src/mcp/client/queue/bull-call-queue';
import { McpCallQueueHost } from '../../src/mcp/client/queue/mcp-call-queue-host';
import { createInMemoryMcpStores } from '../../src/mcp/testing';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { MCP_ACCEPT, callRequest, openSession, post, versionHeader } from '../support/mcp-wire';
import { pollUntil } from './support/free-port';
import { RecordingLogger } from './support/fault-app';
import { startPrivateRedis, type PrivateRedis } from './support/private-redis';
import { mcpClientStores } from '../../src/mcp/stores';

/** keep-alive of the replicas' GET streams; a stream claim lives twice as long. */
const STREAM_KEEP_ALIVE_MS = 2_000;

/** The bus's bound of one Redis command on the replicas below. */
const PUBSUB_TIMEOUT_MS = 2_000;
/** The queue's bound of one Redis command in these apps. */
const COMMAND_TIMEOUT_MS = 2_000;
/**
 * What "reject at once" is held to, counted from the moment Redis is killed: three times the
 * command deadline plus 2 s for a starved machine. A call that waited for Redis without a deadline
 * would exceed it by far; this is a correctness bound, not a speed target.
 */
const OUTAGE_BOUND_MS = COMMAND_TIMEOUT_MS * 3 + 2_000;

/** Resolves like `work`, noting in `at` when it settled. */
function timed<T>(work: Promise<T>, at: number[]): Promise<T> {
  return work.finally(() => at.push(Date.now()));
}

/** Settles every promise and sorts the outcomes into results and errors. */
async function settleAll<T>(work: Promise<T>[]): Promise<{ results: T[]; errors: unknown[] }> {
  const outcomes = await Promise.allSettled(work);
  return {
    results: outcomes
      .filter((o): o is PromiseFulfilledResult<Awaited<T>> => o.status === 'fulfilled')
      .map((o) => o.value as T),
    errors: outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason),
  };
}

/** A GET for the session's event stream: the status, and the body when it is not a stream. */
async function openStream(
  url: string,
  sessionId: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire JSON read by the assertions
): Promise<{ status: number; contentType: string | null; json: any }> {
  const abort = new AbortController();
  const response = await fetch(url, {
    headers: {
      Authorization: 'Bearer token-alice',
      'Mcp-Session-Id': sessionId,
      Accept: 'text/event-stream',
      ...versionHeader(),
    },
    signal: abort.signal,
  });
  const contentType = response.headers.get('content-type');
  if (contentType?.startsWith('text/event-stream')) {
    abort.abort();
    return { status: response.status, contentType, json: undefined };
  }
  const text = await response.text();
  return { status: response.status, contentType, json: text ? JSON.parse(text) : undefined };
}

/**
 * Redis killed under load, then started again: queued calls, waits and the session bus fail
 * fast with typed errors (503 on the endpoint) instead of hanging, and the same apps work again
 * once Redis is back, without a restart. The only clock is jest's timeout.
 */
describe('Redis outage', () => {
  let redis: PrivateRedis;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
  });

  afterAll(async () => {
    for (const app of apps.reverse()) await app.close().catch(() => undefined);
    await redis?.destroy();
  });

  async function bullClientApp(
    worker = true,
    name = `outage-${randomBytes(4).toString('hex')}`,
  ): Promise<INestApplication> {
    const stores = createInMemoryMcpStores();
    const moduleRef = await Test.createTestingModule({
      imports: [
        McpModule.forRoot({ auth: fixtureAuth, providers: [FixtureTools], stores }),
        McpClientModule.forRoot({
          servers: { self: { transport: 'toolset', principal: 'svc', version: '2025-11-25' } },
          redis: redis.url,
          queue: { name, worker, attempts: 1, commandTimeoutMs: COMMAND_TIMEOUT_MS },
          stores: mcpClientStores({ outboundSessions: stores.outboundSessions, events: stores.events }),
          waitTimeoutMs: 20_000,
        }),
      ],
      providers: [FixtureTools],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: new RecordingLogger() });
    await app.init();
    apps.push(app);
    return app;
  }

  const queueOf = (app: INestApplication) => app.get(McpCallQueueHost).queue as BullCallQueue;

  it('Bull calls reject with McpQueueUnavailableError while Redis is down and succeed again once it is back', async () => {
    const app = await bullClientApp();
    const mcp = app.get(McpClientService);
    const calls = (tag: string, n = 4) =>
      Array.from({ length: n }, (_, i) => mcp.callTool('self', 'echo', { text: `${tag}-${i}` }));
    const before = await Promise.all(calls('before'));
    expect(before.map((r) => r.content)).toEqual([0, 1, 2, 3].map((i) => [{ type: 'text', text: `before-${i}` }]));

    // Calls issued the moment Redis is gone, before the queue can have noticed: each one ends in
    // the typed error within the bound, counted from the kill.
    const killedAt = Date.now();
    await redis.kill();
    const atKillSettled: number[] = [];
    const atKill = await settleAll(calls('at-kill', 8).map((call) => timed(call, atKillSettled)));
    expect(atKill.results).toEqual([]);
    expect(atKill.errors).toHaveLength(8);
    for (const error of atKill.errors) {
      expect(error).toBeInstanceOf(McpQueueUnavailableError);
      // An enqueue sent before the connection was known dead may have reached Redis: it ends at the
      // command deadline, delivered. One refused because the drop was already known was not sent.
      const { delivered, message } = error as McpQueueUnavailableError;
      expect(message).toMatch(
        delivered
          ? /\(enqueue\): (Redis did not answer within 2000 ms|Connection is closed\.)$/
          : /\(enqueue\): the connection to Redis is (reconnecting|close|end)$/,
      );
    }
    expect(atKillSettled).toHaveLength(8);
    expect(Math.max(...atKillSettled) - killedAt).toBeLessThanOrEqual(OUTAGE_BOUND_MS);

    // Once the queue knows, nothing is sent: every call is refused, not delivered, as fast.
    await pollUntil('the queue to notice the outage', async () =>
      queueOf(app).bull.client.status === 'ready' ? undefined : true,
    );
    const duringIssuedAt = Date.now();
    const duringSettled: number[] = [];
    const during = await settleAll(calls('during', 8).map((call) => timed(call, duringSettled)));
    expect(during.results).toEqual([]);
    expect(during.errors).toHaveLength(8);
    for (const error of during.errors) {
      expect(error).toBeInstanceOf(McpQueueUnavailableError);
      expect((error as McpQueueUnavailableError).delivered).toBe(false);
      expect((error as Error).message).toMatch(/Redis/);
    }
    expect(Math.max(...duringSettled) - duringIssuedAt).toBeLessThanOrEqual(OUTAGE_BOUND_MS);

    await redis.start();
    await pollUntil(
      'a call to succeed after Redis restarted',
      async () => ((await mcp.callTool('self', 'echo', { text: 'probe' })).content ? true : undefined),
      30_000,
      250,
    );
    const after = await Promise.all(calls('after'));
    expect(after.map((r) => r.content)).toEqual([0, 1, 2, 3].map((i) => [{ type: 'text', text: `after-${i}` }]));
  }, 90_000);

  it('waitForCall with no worker rejects with McpCallWaitTimeoutError and leaves no waiter behind', async () => {
    const app = await bullClientApp(false);
    const mcp = app.get(McpClientService);
    const id = await mcp.callTool('self', 'echo', { text: 'nobody runs me' }, { wait: false });
    const error = await mcp.waitForCall(id, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpCallWaitTimeoutError);
    expect(error).toMatchObject({ callId: id, timeoutMs: 300, delivered: true });
    expect(queueOf(app).waiting).toBe(0);
    await expect(mcp.getCallResult(id)).resolves.toEqual({ id, state: 'pending' });
  });

  it('a wait in progress when Redis dies rejects with McpQueueUnavailableError instead of hanging', async () => {
    const app = await bullClientApp(false);
    const mcp = app.get(McpClientService);
    const id = await mcp.callTool('self', 'echo', { text: 'waiting' }, { wait: false });
    const waiting = mcp.waitForCall(id).catch((e: unknown) => e);
    await pollUntil('the waiter to register', async () => (queueOf(app).waiting === 1 ? true : undefined));
    const killedAt = Date.now();
    await redis.kill();
    try {
      const error = await waiting;
      expect(Date.now() - killedAt).toBeLessThanOrEqual(OUTAGE_BOUND_MS);
      expect(error).toBeInstanceOf(McpQueueUnavailableError);
      expect(queueOf(app).waiting).toBe(0);
    } finally {
      await redis.start();
    }
  });

  describe('session bus on two replicas', () => {
    let a: { url: string };
    let b: { url: string };

    beforeAll(async () => {
      // One session store shared by both replicas, as a database would be.
      const stores = createInMemoryMcpStores();
      const channelPrefix = `outage-${randomBytes(4).toString('hex')}`;
      const boot = async () => {
        const moduleRef = await Test.createTestingModule({
          // A GET refused with 503 during the outage may leave its stream claim queued in ioredis's
          // offline queue; it runs on reconnect and holds the session's GET stream (409) for two
          // keep-alive intervals. A short keep-alive lets such a claim expire well within the wait
          // below, however late the reconnect comes on a starved machine.
          imports: [
            McpModule.forRoot({
              auth: fixtureAuth,
              providers: [FixtureTools],
              stores,
              redis: redis.url,
              advanced: {
                pubsub: { channelPrefix, timeoutMs: PUBSUB_TIMEOUT_MS },
                streams: { keepAliveMs: STREAM_KEEP_ALIVE_MS },
              },
              stateless: { requestStateSecret: 'the-shared-secret-of-both-replicas' },
            }),
          ],
          providers: [FixtureTools],
        }).compile();
        const app = moduleRef.createNestApplication({ logger: new RecordingLogger() });
        await app.listen(0, '127.0.0.1');
        apps.push(app);
        const { port } = app.getHttpServer().address() as { port: number };
        return { url: `http://127.0.0.1:${port}/mcp` };
      };
      a = await boot();
      b = await boot();
    });

    it('answers 503 with a JSON-RPC body for what needs Redis while it is down, and works again after', async () => {
      const { sessionId } = await openSession(a.url);
      const killedAt = Date.now();
      await redis.kill();
      try {
        // Wait until the replica's publisher noticed (the first command after the kill may still be
        // in flight, bounded by pubsub.timeoutMs): from the kill, within three times that plus 2 s.
        await pollUntil('the bus to refuse a cancellation', async () => {
          const reply = await post(
            b.url,
            { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'nope' } },
            { sessionId, headers: versionHeader() },
          );
          return reply.status === 503 ? reply : undefined;
        });
        expect(Date.now() - killedAt).toBeLessThanOrEqual(PUBSUB_TIMEOUT_MS * 3 + 2_000);
        const cancels = await Promise.all(
          Array.from({ length: 4 }, (_, i) =>
            post(
              b.url,
              { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: `r-${i}` } },
              { sessionId, headers: versionHeader() },
            ),
          ),
        );
        for (const reply of cancels) {
          expect(reply.status).toBe(503);
          expect(reply.headers.get('retry-after')).toBe('1');
          expect(reply.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32603 } });
        }
        const stream = await openStream(b.url, sessionId);
        expect(stream.status).toBe(503);
        expect(stream.json).toMatchObject({ jsonrpc: '2.0', error: { code: -32603 } });
        // A plain tools/call does not need the bus: it is still served.
        const call = await post(a.url, callRequest('c-1', 'echo', { text: 'no bus needed' }), {
          sessionId,
          headers: versionHeader(),
        });
        expect(call.status).toBe(200);
      } finally {
        await redis.start();
      }
      // Until then a GET is refused because the bus is still down (503) or a stale claim is held (409).
      const refusals = new Set<number>();
      await pollUntil(
        'the GET stream to open again',
        async () => {
          const { status } = await openStream(b.url, sessionId);
          if (status === 200) return true;
          refusals.add(status);
          return undefined;
        },
        60_000,
        250,
      );
      expect([...refusals].filter((status) => status !== 503 && status !== 409)).toEqual([]);
      const cancel = await post(
        b.url,
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'after' } },
        { sessionId, headers: { ...versionHeader(), Accept: MCP_ACCEPT } },
      );
      expect(cancel.status).toBe(202);
    }, 150_000);
  });
});
