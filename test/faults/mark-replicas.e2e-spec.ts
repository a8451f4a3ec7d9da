import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { McpClientModule, McpClientService, McpModule } from '../../src/mcp';
import { McpQueueUnavailableError } from '../../src/mcp/errors';
import type { BullCallQueue } from '../../src/mcp/client/queue/bull-call-queue';
import { McpCallQueueHost } from '../../src/mcp/client/queue/mcp-call-queue-host';
import { connectedReplicasOf } from '../../src/mcp/redis-connection';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { FailoverCountingTools } from '../support/failover-load';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { startRedisSentinelGroup, type RedisSentinelGroup } from '../support/redis-sentinel-group';

jest.setTimeout(60_000);

/** The WAIT bound of the marks (`commandTimeoutMs`): a refused call takes about this long. */
const COMMAND_TIMEOUT_MS = 1_000;

/**
 * A call's at-most-once mark must reach a replica before the call is sent, or a failover can lose
 * it and run the call twice. The client's Bull queue runs on a Sentinel group of its own (one
 * master, one replica, three sentinels). SIGSTOPped, the replica keeps its connections (the master
 * still lists it) and acknowledges nothing: with `markReplicas` unset (auto) a `tools/call` is then
 * refused before it is sent, and its mark is deleted; with `markReplicas: 0` it is sent. Killed, the
 * replica is gone from the master's list: auto sends calls (and warns), `markReplicas: 1` refuses them.
 */
describe('at-most-once mark on a Sentinel group: the call is sent only once a replica holds its mark', () => {
  let group: RedisSentinelGroup;
  let db: TestDatabase;
  let master: Redis;
  let target: RunningApp;
  /** `markReplicas` unset: auto, the Sentinel default. */
  let waiting: RunningApp;
  /** `markReplicas: 0`: its queue waits for none. */
  let unwaiting: RunningApp;
  /** `markReplicas: 1`: its queue waits for one replica, whatever the master lists. */
  let strict: RunningApp;
  const suffix = randomBytes(4).toString('hex');

  const client = (app: RunningApp) => app.app.get(McpClientService);
  const queueOf = (app: RunningApp) => app.app.get(McpCallQueueHost, { strict: false }).queue as BullCallQueue;
  const markKey = (app: RunningApp, id: string) => {
    const queue = queueOf(app);
    return `${queue.keyPrefix}:${queue.bull.name}:mcp-attempted:${id}`;
  };
  /** The tools/call requests of `tag` that reached the target (its inbound audit rows). */
  const received = async (tag: string): Promise<number> => {
    const [row]: Array<{ count: string }> = await db.dataSource.query(
      `SELECT count(*) AS count FROM mcp_events
       WHERE direction = 'inbound' AND method = 'tools/call' AND request->'params'->'arguments'->>'tag' = $1`,
      [tag],
    );
    return Number(row.count);
  };
  const caller = (name: string, markReplicas?: number) =>
    startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: { remote: { url: `${target.baseUrl}/mcp`, bearerToken: 'token-alice' } },
          redis: { sentinels: group.sentinels, name: group.name },
          queue: {
            name,
            attempts: 1,
            commandTimeoutMs: COMMAND_TIMEOUT_MS,
            ...(markReplicas !== undefined ? { markReplicas } : {}),
          },
          waitTimeoutMs: 30_000,
        }),
      ],
    });

  /** Runs `work` with the replica SIGSTOPped, and continues it whatever happens. */
  const withReplicaPaused = async <T>(work: () => Promise<T>): Promise<T> => {
    group.pauseReplica();
    try {
      return await work();
    } finally {
      group.resumeReplica();
    }
  };

  beforeAll(async () => {
    [group, db] = await Promise.all([startRedisSentinelGroup(), createTestDatabase()]);
    master = new Redis({ port: group.masterPort, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    target = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth, providers: [FailoverCountingTools] })],
      providers: [FailoverCountingTools],
    });
    [waiting, unwaiting, strict] = await Promise.all([
      caller(`marks-${suffix}`),
      caller(`marks-0-${suffix}`, 0),
      caller(`marks-1-${suffix}`, 1),
    ]);
  });

  afterAll(async () => {
    group?.resumeReplica();
    await waiting?.close().catch(() => undefined);
    await unwaiting?.close().catch(() => undefined);
    await strict?.close().catch(() => undefined);
    await target?.close().catch(() => undefined);
    master?.disconnect();
    await group?.destroy();
    await db?.drop();
  });

  it('waits for the replica by default (auto) on Sentinel, and answers while the replica is up', async () => {
    expect(queueOf(waiting).markReplicas).toBe('auto');
    expect(queueOf(unwaiting).markReplicas).toBe(0);
    expect(queueOf(strict).markReplicas).toBe(1);
    const result = await client(waiting).callTool('remote', 'count', { tag: 'replica-up' });
    expect(result.content).toEqual([{ type: 'text', text: 'replica-up' }]);
    expect(FailoverCountingTools.runs.get('replica-up')).toBe(1);
  });

  it('auto, with the replica stopped but still listed, does not send the call: McpQueueUnavailableError (not delivered), the mark deleted; after SIGCONT a new call is sent once', async () => {
    const tag = 'replica-stopped';
    const [id, error] = await withReplicaPaused(async () => {
      const enqueued = await client(waiting).enqueueToolCall('remote', 'count', { tag });
      return [
        enqueued,
        await client(waiting)
          .waitForCall(enqueued)
          .catch((failure: unknown) => failure),
      ] as const;
    });

    expect(error).toBeInstanceOf(McpQueueUnavailableError);
    expect(error).toMatchObject({ operation: 'at-most-once mark', delivered: false });
    expect((error as Error).message).toContain(
      `only 0 of the 1 replica(s) waited for (the master lists 1 connected) acknowledged the mark within ${COMMAND_TIMEOUT_MS} ms; the call was not sent`,
    );
    expect(await master.exists(markKey(waiting, id))).toBe(0);
    expect(await client(waiting).getCallResult(id)).toMatchObject({
      state: 'failed',
      error: expect.any(McpQueueUnavailableError) as unknown,
    });
    expect(FailoverCountingTools.runs.get(tag)).toBeUndefined();
    expect(await received(tag)).toBe(0);

    // Continued, the replica catches up with the master and acknowledges writes again.
    await pollUntil('the replica to acknowledge a write', async () => {
      await master.set(`marks-probe-${suffix}`, '1');
      return (await master.wait(1, 200)) === 1 ? true : undefined;
    });
    const after = await client(waiting).callTool('remote', 'count', { tag: 'replica-back' });
    expect(after.content).toEqual([{ type: 'text', text: 'replica-back' }]);
    expect(FailoverCountingTools.runs.get('replica-back')).toBe(1);
    expect(await received('replica-back')).toBe(1);
    expect(FailoverCountingTools.runs.get(tag)).toBeUndefined();
  });

  it('with markReplicas: 0, sends the call while the replica is stopped', async () => {
    const tag = 'unacknowledged-mark';
    const [id, result] = await withReplicaPaused(async () => {
      const enqueued = await client(unwaiting).enqueueToolCall('remote', 'count', { tag });
      return [enqueued, await client(unwaiting).waitForCall(enqueued)] as const;
    });
    expect(result.content).toEqual([{ type: 'text', text: tag }]);
    expect(FailoverCountingTools.runs.get(tag)).toBe(1);
    expect(await received(tag)).toBe(1);
    // The mark was written (on the master alone) and the call sent.
    expect(await master.get(markKey(unwaiting, id))).toMatch(new RegExp(`^${process.pid}:`));
  });

  it('with the replica killed: auto sends the calls with one warning, markReplicas: 1 refuses them', async () => {
    await group.killReplicas();
    await pollUntil('the master to list no replica', async () =>
      connectedReplicasOf(await master.role()) === 0 ? true : undefined,
    );
    const warnings: string[] = [];
    const warned = jest
      .spyOn(Logger.prototype, 'warn')
      .mockImplementation((message: unknown) => void warnings.push(String(message)));
    try {
      for (const tag of ['no-replica-1', 'no-replica-2']) {
        const id = await client(waiting).enqueueToolCall('remote', 'count', { tag });
        expect((await client(waiting).waitForCall(id)).content).toEqual([{ type: 'text', text: tag }]);
        expect(FailoverCountingTools.runs.get(tag)).toBe(1);
        expect(await master.get(markKey(waiting, id))).toMatch(new RegExp(`^${process.pid}:`));
      }
      expect(warnings.filter((warning) => warning.includes('lists no connected replica'))).toEqual([
        expect.stringContaining(`Queue "marks-${suffix}": the master of the queue's Redis lists no connected replica`),
      ]);

      const error = await client(strict)
        .callTool('remote', 'count', { tag: 'strict-no-replica' })
        .catch((failure: unknown) => failure);
      expect(error).toBeInstanceOf(McpQueueUnavailableError);
      expect(error).toMatchObject({ operation: 'at-most-once mark', delivered: false });
      expect((error as Error).message).toContain('only 0 of the 1 replica(s) queue.markReplicas asks for');
      expect(FailoverCountingTools.runs.get('strict-no-replica')).toBeUndefined();
    } finally {
      warned.mockRestore();
    }
  });
});
