import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Injectable } from '@nestjs/common';
import Redis, { Cluster } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { McpClientModule, McpClientService, McpModule, McpTool, type McpRedisClusterConnection } from '../../src/mcp';
import { McpQueueUnavailableError } from '../../src/mcp/errors';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { expectSessionNotificationAcrossReplicas } from '../fixtures/sse/cross-replica-stream';
import { SseTools } from '../fixtures/sse/sse-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';
import { RedisTokenStore } from '../../src/mcp/client/auth/redis-token.store';
import { BullRetentionSchedule } from '../../src/mcp/persistence/retention/retention-schedule';
import { McpRedisOutageLog } from '../../src/mcp/redis-outage-log';
import { McpBullTaskQueue } from '../../src/mcp/server/tasks/bull-task.queue';
import { McpRedisEventLog } from '../../src/mcp/server/pubsub/redis-event-log';
import { McpCallQueueHost } from '../../src/mcp/client/queue/mcp-call-queue-host';
import type { BullCallQueue } from '../../src/mcp/client/queue/bull-call-queue';
import { connectedReplicasOf } from '../../src/mcp/redis-connection';

jest.setTimeout(60_000);

/** Counts its runs per tag; its rate limit makes every call run a two-key script (mount and tool budgets). */
@Injectable()
class ClusterCountingTools {
  static readonly runs = new Map<string, number>();

  @McpTool({
    description: 'Counts one run of the tag',
    input: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
    rateLimit: { limit: 10_000, windowMs: 60_000 },
  })
  count({ tag }: { tag: string }): string {
    ClusterCountingTools.runs.set(tag, (ClusterCountingTools.runs.get(tag) ?? 0) + 1);
    return tag;
  }
}

/** Every key of the cluster matching `pattern`, read from each master. */
async function clusterKeys(redis: Cluster, pattern: string): Promise<string[]> {
  const found: string[] = [];
  for (const node of redis.nodes('master')) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  }
  return found;
}

function isResponseBody(body: unknown): boolean {
  if (typeof body !== 'string') return false;
  const message = JSON.parse(body) as Record<string, unknown>;
  return 'id' in message && !('method' in message);
}

/**
 * The module on a Redis Cluster of its own (three masters, one replica each): two server
 * replicas whose session bus, stream claims, resumption log and rate limits run on the Cluster,
 * and a client whose Bull call queue does, with its at-most-once marks beside the jobs.
 */
describe('McpModule and McpClientModule on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let probe: Cluster;
  let db: TestDatabase;
  let a: RunningApp;
  let b: RunningApp;
  let caller: RunningApp;
  let client: McpClientService;
  const clients: Client[] = [];
  const channelPrefix = `cluster-e2e-${randomBytes(4).toString('hex')}`;
  const queuePrefix = `cluster-calls-${randomBytes(4).toString('hex')}`;
  const queueName = 'mcp-calls';
  const connection = (): McpRedisClusterConnection => ({ cluster: { nodes: cluster.nodes } });

  const replica = () =>
    startApp(db.url, {
      imports: [
        McpModule.forRoot({
          auth: fixtureAuth,
          providers: [SseTools, ClusterCountingTools],
          redis: connection(),
          rateLimit: { limit: 10_000, windowMs: 60_000 },
          advanced: { pubsub: { channelPrefix } },
          stateless: { requestStateSecret: 'a-shared-secret-of-the-cluster-suite' },
        }),
      ],
      providers: [SseTools, ClusterCountingTools],
    });

  beforeAll(async () => {
    const started = Date.now();
    [cluster, db] = await Promise.all([startRedisCluster(), createTestDatabase()]);
    console.log(`Redis Cluster of six nodes ready in ${Date.now() - started} ms`);
    probe = new Cluster(cluster.nodes);
    a = await replica();
    b = await replica();
    caller = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: { remote: { url: `${a.baseUrl}/mcp`, bearerToken: 'token-alice' } },
          redis: connection(),
          queue: { name: queueName, prefix: queuePrefix, attempts: 1 },
        }),
      ],
    });
    client = caller.app.get(McpClientService);
  });

  afterAll(async () => {
    await Promise.all(clients.map((sdk) => sdk.close().catch(() => undefined)));
    await caller?.close().catch(() => undefined);
    await a?.close().catch(() => undefined);
    await b?.close().catch(() => undefined);
    probe?.disconnect();
    await db?.drop();
    await cluster?.destroy();
  });

  it('answers tools/call through the Bull call queue, each job run once, its keys under one hash tag', async () => {
    expect(client.mode).toBe('bull');
    const tags = Array.from({ length: 24 }, (_, i) => `queued-${i}`);
    const results = await Promise.all(tags.map((tag) => client.callTool('remote', 'count', { tag })));
    expect(results.map((result) => result.content)).toEqual(tags.map((tag) => [{ type: 'text', text: tag }]));
    expect(tags.map((tag) => ClusterCountingTools.runs.get(tag))).toEqual(tags.map(() => 1));
    // Bull's keys and the at-most-once marks live in the slot of the tagged prefix.
    const keys = await clusterKeys(probe, `*${queuePrefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((key) => key.startsWith(`{${queuePrefix}}:${queueName}:`))).toBe(true);
    expect(keys.filter((key) => key.includes(':mcp-attempted:'))).toHaveLength(tags.length);
    // The rate limits counted every call in Redis, under the mount's tag.
    const budgets = await clusterKeys(probe, `{${channelPrefix}:default}:rate:*`);
    expect(budgets.length).toBe(2);
  });

  it('runs the task queue and the retention schedule on the Cluster, and keeps tokens beside the call queue', async () => {
    const outages = new McpRedisOutageLog({ warn: () => undefined, error: () => undefined });
    const tasks = new McpBullTaskQueue(`cluster-tasks-${queuePrefix}`, connection(), 5_000, outages);
    const retention = new BullRetentionSchedule(
      { name: `cluster-retention-${queuePrefix}`, redis: connection(), options: {} },
      // Bull starts a repeatable job at the next multiple of its period: a short one ticks soon.
      1_000,
      outages,
    );
    try {
      const ran: string[] = [];
      let done!: () => void;
      const finished = new Promise<void>((resolve) => (done = resolve));
      await tasks.start(async (taskId) => {
        ran.push(taskId);
        done();
      }, 1);
      await tasks.enqueue('task-1');
      await finished;
      expect(ran).toEqual(['task-1']);
      expect((await tasks.stats()).mode).toBe('bull');

      let ticked!: () => void;
      const tick = new Promise<void>((resolve) => (ticked = resolve));
      await retention.start(async () => ticked());
      await tick;
    } finally {
      await tasks.close();
      await retention.close();
    }
    expect(await clusterKeys(probe, `{bull}:cluster-tasks-${queuePrefix}:*`)).not.toEqual([]);
    expect(await clusterKeys(probe, `{bull}:cluster-retention-${queuePrefix}:*`)).not.toEqual([]);

    // The client's token store: on the queue's connection, under the queue's tag.
    const queue = caller.app.get(McpCallQueueHost).queue as BullCallQueue;
    const tokens = new RedisTokenStore(queue.bull.client, `${queue.keyPrefix}:mcp-oauth:`);
    expect(await tokens.lock('server-a', 5_000)).toBe(true);
    expect(await tokens.lock('server-a', 5_000)).toBe(false);
    await tokens.set('server-a', 'token-1', 60_000);
    await tokens.delete('server-a', 'token-2');
    expect(await tokens.get('server-a')).toBe('token-1');
    await tokens.delete('server-a', 'token-1');
    await tokens.unlock('server-a');
    expect(await tokens.get('server-a')).toBeNull();
    expect(await tokens.lock('server-a', 5_000)).toBe(true);
    expect(await clusterKeys(probe, `{${queuePrefix}}:mcp-oauth:lock:server-a`)).toHaveLength(1);
  });

  it('delivers an elicitation answer POSTed to replica B to the call running on replica A', async () => {
    const routed: string[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(`${a.baseUrl}/mcp`), {
      requestInit: { headers: { Authorization: 'Bearer token-alice' } },
      fetch: (input, init) => {
        const toB = init?.method === 'POST' && isResponseBody(init.body);
        routed.push(toB ? 'B' : 'A');
        return fetch(toB ? `${b.baseUrl}/mcp` : input, init);
      },
    });
    const sdk = new Client({ name: 'cluster-e2e', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    clients.push(sdk);
    await sdk.connect(transport);
    sdk.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace' } }));
    const result = await sdk.callTool({ name: 'ask_name', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'hello Grace' }]);
    expect(routed.filter((to) => to === 'B')).toHaveLength(1);
  });

  it('claims a GET stream on one replica only, carries a notification from B to it, and logs it for resumption', async () => {
    const sessionId = await expectSessionNotificationAcrossReplicas(a, b);
    // The stream and its counter share the hash tag of the stream's name.
    const logged = await pollUntil('the resumption log of the stream', async () => {
      const keys = await clusterKeys(probe, `{${channelPrefix}:default:events:${sessionId}:*`);
      return keys.length ? keys : undefined;
    });
    expect(logged.every((key) => /^\{[^}]+\}(:seq)?$/.test(key))).toBe(true);
  });

  it('resumes a stream from the log on the Cluster, numbers it, and forgets both of its keys at once', async () => {
    const log = new McpRedisEventLog(probe, `${channelPrefix}:direct`, { maxEvents: 100, ttlMs: 60_000 }, true);
    for (const data of ['one', 'two', 'three']) await log.append('session-1', 'stream-1', data);
    await log.append('session-1', 'stream-1', 'last', { final: true });
    expect(await log.lastSeq('session-1', 'stream-1')).toBe(4);
    expect(await log.after('session-1', 'stream-1', 2)).toEqual([
      { seq: 3, data: 'three', final: false },
      { seq: 4, data: 'last', final: true },
    ]);
    const keys = `{${channelPrefix}:direct:events:session-1:stream-1}*`;
    expect((await clusterKeys(probe, keys)).sort()).toEqual([
      `{${channelPrefix}:direct:events:session-1:stream-1}`,
      `{${channelPrefix}:direct:events:session-1:stream-1}:seq`,
    ]);
    await log.forget('session-1', 'stream-1');
    expect(await clusterKeys(probe, keys)).toEqual([]);
  });

  // Last: the paused replica may be taken for failed by the other nodes for a while, then it is killed.
  it("waits for the replica of its mark's slot owner (SET, ROLE and WAIT reach that master), and sends without waiting once that master has none", async () => {
    expect((caller.app.get(McpCallQueueHost).queue as BullCallQueue).markReplicas).toBe('auto');
    // A second client on the same tagged prefix (the same slot), whose WAIT gives up after 1 s.
    const name = 'mcp-calls-marks';
    const marking = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: { remote: { url: `${a.baseUrl}/mcp`, bearerToken: 'token-alice' } },
          redis: connection(),
          queue: { name, prefix: queuePrefix, attempts: 1, commandTimeoutMs: 1_000 },
        }),
      ],
    });
    const slotKey = `{${queuePrefix}}:${name}:`;
    try {
      const marked = marking.app.get(McpClientService);
      const up = await marked.callTool('remote', 'count', { tag: 'marks-replica-up' });
      expect(up.content).toEqual([{ type: 'text', text: 'marks-replica-up' }]);

      // A WAIT sent to another master would count that master's replica, which is up: only the
      // slot owner's can refuse the call.
      const paused = await cluster.pauseReplicaOf(slotKey);
      let id = '';
      let error: unknown;
      try {
        id = await marked.enqueueToolCall('remote', 'count', { tag: 'marks-replica-stopped' });
        error = await marked.waitForCall(id).catch((failure: unknown) => failure);
      } finally {
        paused.resume();
      }
      expect(error).toBeInstanceOf(McpQueueUnavailableError);
      expect(error).toMatchObject({ operation: 'at-most-once mark', delivered: false });
      expect((error as Error).message).toContain('only 0 of the 1 replica(s)');
      expect(ClusterCountingTools.runs.get('marks-replica-stopped')).toBeUndefined();
      expect(await clusterKeys(probe, `{${queuePrefix}}:${name}:mcp-attempted:${id}`)).toEqual([]);
      expect(ClusterCountingTools.runs.get('marks-replica-up')).toBe(1);

      // Killed, the replica leaves its master's ROLE and the call goes without waiting. A ROLE sent
      // to another master would list that master's replica, and the WAIT on the slot owner refuse it.
      const { masterPort } = await cluster.killReplicaOf(slotKey);
      const owner = new Redis({ host: '127.0.0.1', port: masterPort, maxRetriesPerRequest: 1 });
      try {
        await pollUntil('the slot owner to list no replica', async () =>
          connectedReplicasOf(await owner.role()) === 0 ? true : undefined,
        );
      } finally {
        owner.disconnect();
      }
      const gone = await marked.callTool('remote', 'count', { tag: 'marks-replica-gone' });
      expect(gone.content).toEqual([{ type: 'text', text: 'marks-replica-gone' }]);
      expect(ClusterCountingTools.runs.get('marks-replica-gone')).toBe(1);
    } finally {
      await marking.close();
    }
  });
});
