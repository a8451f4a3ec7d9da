import { randomBytes } from 'node:crypto';
import type { McpClientService } from '../../src/mcp';
import {
  expectServedOnceAndAudited,
  expectTypedRefusals,
  startCallLoops,
  startFailoverApps,
} from '../support/failover-load';
import type { RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { startRedisSentinelGroup, type RedisSentinelGroup } from '../support/redis-sentinel-group';

jest.setTimeout(90_000);

/**
 * The client's Bull call queue on a Sentinel group of its own (one master, one replica, three
 * sentinels) while callers loop `tools/call` to an HTTP MCP server: the master is SIGKILLed, the
 * sentinels promote the replica, and the same app carries on without a restart. With
 * `queue.markReplicas` unset (auto), each call waits for the replica to hold its mark; the
 * promoted replica has no replica of its own, so calls are then sent without waiting.
 */
describe('McpClientModule on a Sentinel group: the master is killed under load', () => {
  let group: RedisSentinelGroup;
  let db: TestDatabase;
  let target: RunningApp;
  let caller: RunningApp;
  let client: McpClientService;
  const queueName = `failover-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    [group, db] = await Promise.all([startRedisSentinelGroup(), createTestDatabase()]);
    ({ target, caller, client } = await startFailoverApps(
      db.url,
      { sentinels: group.sentinels, name: group.name },
      { name: queueName },
    ));
  });

  afterAll(async () => {
    await caller?.close().catch(() => undefined);
    await target?.close().catch(() => undefined);
    await group?.destroy();
    await db?.drop();
  });

  it('fails calls fast with McpQueueUnavailableError during the switch, then serves them again; no call runs twice, each answer has its audit row', async () => {
    expect(client.mode).toBe('bull');
    const loops = startCallLoops(client, 'remote');
    await loops.untilAnswered(8);
    const killedAt = Date.now();
    await group.killMaster();
    await loops.untilRecovered(killedAt);
    await loops.stop();

    expectTypedRefusals('Sentinel failover under load', loops, killedAt);
    await expectServedOnceAndAudited(client, 'remote', loops, db);
  });
});
