import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { McpClientModule, McpClientService, McpModule, McpTool } from '../../src/mcp';
import { McpQueueUnavailableError } from '../../src/mcp/errors';
import { fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';

jest.setTimeout(90_000);

/** Counts its runs per tag, so that a call run twice shows. */
@Injectable()
class ClusterFailoverCountingTools {
  static readonly runs = new Map<string, number>();

  @McpTool({
    description: 'Counts one run of the tag',
    input: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
  })
  count({ tag }: { tag: string }): string {
    ClusterFailoverCountingTools.runs.set(tag, (ClusterFailoverCountingTools.runs.get(tag) ?? 0) + 1);
    return tag;
  }

  /** Opens the gate the `hold` calls wait at. */
  static open: () => void;
  static readonly gate = new Promise<void>((resolve) => (ClusterFailoverCountingTools.open = resolve));

  @McpTool({
    description: 'Counts one run of the tag, then waits until the test opens the gate',
    input: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
  })
  async hold({ tag }: { tag: string }): Promise<string> {
    ClusterFailoverCountingTools.runs.set(tag, (ClusterFailoverCountingTools.runs.get(tag) ?? 0) + 1);
    await ClusterFailoverCountingTools.gate;
    return tag;
  }
}

/** One `callTool` of a loop: when it started and ended, and how. */
interface Outcome {
  tag: string;
  startedAt: number;
  endedAt: number;
  error?: unknown;
}

/**
 * The client's Bull call queue on a Redis Cluster of its own (three masters, one replica each,
 * `cluster-node-timeout` 2 s) while callers loop `tools/call` to an HTTP MCP server: the master
 * serving the queue's hash slot is SIGKILLed, its replica takes the slot over, and the same app
 * carries on without a restart.
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
    target = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth, providers: [ClusterFailoverCountingTools] })],
      providers: [ClusterFailoverCountingTools],
    });
    caller = await startApp(db.url, {
      imports: [
        McpClientModule.forRoot({
          servers: { remote: { url: `${target.baseUrl}/mcp`, bearerToken: 'token-alice' } },
          redis: { cluster: { nodes: cluster.nodes } },
          queue: { name: queueName, prefix: queuePrefix, attempts: 1, commandTimeoutMs: 2_000 },
          waitTimeoutMs: 30_000,
        }),
      ],
    });
    client = caller.app.get(McpClientService);
  });

  afterAll(async () => {
    await caller?.close().catch(() => undefined);
    await target?.close().catch(() => undefined);
    await cluster?.destroy();
    await db?.drop();
  });

  it('fails calls fast with McpQueueUnavailableError during the switch, then serves them again; no call runs twice, each answer has its audit row', async () => {
    expect(client.mode).toBe('bull');
    const outcomes: Outcome[] = [];
    let next = 0;
    let stopping = false;
    const loop = async (looper: number) => {
      while (!stopping) {
        const tag = `l${looper}-${next++}`;
        const startedAt = Date.now();
        try {
          const result = await client.callTool('remote', 'count', { tag });
          expect(result.content).toEqual([{ type: 'text', text: tag }]);
          outcomes.push({ tag, startedAt, endedAt: Date.now() });
        } catch (error) {
          outcomes.push({ tag, startedAt, endedAt: Date.now(), error });
          // A refusal comes at once: the loop breathes instead of spinning on it.
          await delay(50);
        }
      }
    };
    const loops = Promise.all([0, 1, 2, 3].map(loop));
    const answered = () => outcomes.filter((outcome) => !outcome.error);

    await pollUntil('eight calls answered before the kill', () => (answered().length >= 8 ? true : undefined), 30_000);
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
      () => (heldTags.every((tag) => ClusterFailoverCountingTools.runs.get(tag) === 1) ? true : undefined),
      30_000,
    );
    const killedAt = Date.now();
    const killedPort = await cluster.killMasterOf(`{${queuePrefix}}:${queueName}:id`);
    ClusterFailoverCountingTools.open();
    for (const error of await Promise.all(held)) {
      expect(error).toBeInstanceOf(McpQueueUnavailableError);
      expect(error).toMatchObject({ delivered: true });
    }
    // Recovered: a failure was seen after the kill, and twenty calls in a row answered after the last one.
    await pollUntil(
      'twenty calls in a row answered after the switch',
      () => {
        const last = outcomes.map((outcome) => outcome.error !== undefined).lastIndexOf(true);
        const failedAfterKill = last >= 0 && outcomes[last].endedAt >= killedAt;
        return failedAfterKill && outcomes.length - last - 1 >= 20 ? true : undefined;
      },
      60_000,
      100,
    );
    stopping = true;
    await loops;

    const failures = outcomes.filter((outcome) => outcome.error !== undefined);
    const lastFailure = Math.max(...failures.map((outcome) => outcome.endedAt));
    const firstAnswerAfter = Math.min(
      ...answered()
        .filter((outcome) => outcome.startedAt >= lastFailure)
        .map((outcome) => outcome.endedAt),
    );
    console.log(
      `Cluster failover under load (master :${killedPort} killed): ${outcomes.length} calls, ${failures.length} refused with McpQueueUnavailableError ` +
        `during the switch; calls answer again ${firstAnswerAfter - killedAt} ms after the master was killed`,
    );
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) expect(failure.error).toBeInstanceOf(McpQueueUnavailableError);

    // The same app, without a restart: every call now answers.
    const after = Array.from({ length: 10 }, (_, i) => `after-${i}`);
    await expect(Promise.all(after.map((tag) => client.callTool('remote', 'count', { tag })))).resolves.toHaveLength(
      10,
    );

    // At most once: no tag ran twice, and every answered call ran exactly once.
    const answeredTags = [...answered().map((outcome) => outcome.tag), ...after];
    expect([...ClusterFailoverCountingTools.runs.values()].filter((runs) => runs > 1)).toEqual([]);
    expect(answeredTags.filter((tag) => ClusterFailoverCountingTools.runs.get(tag) !== 1)).toEqual([]);

    // Every answered call has its outbound audit row (the rows are written in batches).
    const rows = await pollUntil(
      'the audit row of every answered call',
      async () => {
        const found: Array<{ tag: string }> = await db.dataSource.query(
          `SELECT request->'params'->'arguments'->>'tag' AS tag FROM mcp_events
           WHERE direction = 'outbound' AND server = 'remote' AND method = 'tools/call'`,
        );
        const tags = new Set(found.map((row) => row.tag));
        return answeredTags.every((tag) => tags.has(tag)) ? found : undefined;
      },
      30_000,
      200,
    );
    const perTag = new Map<string, number>();
    for (const row of rows) perTag.set(row.tag, (perTag.get(row.tag) ?? 0) + 1);
    expect([...perTag.entries()].filter(([, count]) => count > 1)).toEqual([]);
  });
});
