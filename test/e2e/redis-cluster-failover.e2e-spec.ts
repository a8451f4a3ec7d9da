import { randomBytes } from 'node:crypto';
import type { McpClientService } from '../../src/mcp';
import { McpQueueUnavailableError } from '../../src/mcp/errors';
import {
  expectServedOnceAndAudited,
  expectTypedRefusals,
  FailoverCountingTools,
  startCallLoops,
  startFailoverApps,
} from '../support/failover-load';
import type { RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';

jest.setTimeout(90_000);

/**
 * The client's Bull call queue on a Redis Cluster of its own (three masters, one replica each,
 * `cluster-node-timeout` 2 s) while callers loop `tools/call` to an HTTP MCP server: the master
 * serving the queue's hash slot is SIGKILLed, its replica takes the slot over, and the same app
 * carries on without a restart. With `queue.markReplicas` unset (auto), each call waits for the
 * replica to hold its mark; the new master has no replica, so calls are then sent without waiting.
 */
describe('McpClientModule on a Redis Cluster: the master of the queue is killed under load', () => {
  let cluster: RedisCluster;
  let db: TestDatabase;
  let target: RunningApp;
  let caller: RunningApp;
  let client: McpClientService;
  const queuePrefix = `cluster-failover-${randomBytes(4).toString('hex')}`;
  const queueName = 'mcp-calls';

  beforeAll(async () => {
    [cluster, db] = await Promise.all([startRedisCluster(), createTestDatabase()]);
    ({ target, caller, client } = await startFailoverApps(
      db.url,
      { cluster: { nodes: cluster.nodes } },
      { name: queueName, prefix: queuePrefix },
    ));
  });

  afterAll(async () => {
    await caller?.close().catch(() => undefined);
    await target?.close().catch(() => undefined);
    await cluster?.destroy();
    await db?.drop();
  });

  it('fails calls fast with McpQueueUnavailableError during the switch, then serves them again; no call runs twice, each answer has its audit row', async () => {
    expect(client.mode).toBe('bull');
    const loops = startCallLoops(client, 'remote');
    await loops.untilAnswered(8);
    // Three calls running in the worker when the master dies: their outcomes cannot reach their
    // callers through the dead node, so the callers must hear of it at once, not at waitTimeoutMs.
    const heldTags = ['held-0', 'held-1', 'held-2'];
    const held = heldTags.map((tag) =>
      client.callTool('remote', 'hold', { tag }).then(
        () => undefined,
        (error: unknown) => error,
      ),
    );
    await pollUntil(
      'the three held calls running',
      () => (heldTags.every((tag) => FailoverCountingTools.runs.get(tag) === 1) ? true : undefined),
      30_000,
    );
    const killedAt = Date.now();
    const killedPort = await cluster.killMasterOf(`{${queuePrefix}}:${queueName}:id`);
    FailoverCountingTools.open();
    for (const error of await Promise.all(held)) {
      expect(error).toBeInstanceOf(McpQueueUnavailableError);
      expect(error).toMatchObject({ delivered: true });
    }
    await loops.untilRecovered(killedAt);
    await loops.stop();

    expectTypedRefusals(`Cluster failover under load (master :${killedPort} killed)`, loops, killedAt);
    await expectServedOnceAndAudited(client, 'remote', loops, db);
  });
});
