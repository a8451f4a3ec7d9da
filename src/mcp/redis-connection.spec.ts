import type { Queue } from 'bull';
import type { Redis } from 'ioredis';
import { pollUntil } from '../../test/support/polling';
import { startRedisSentinelGroup, type RedisSentinelGroup } from '../../test/support/redis-sentinel-group';
import { createBullQueue } from './bull-queue.factory';
import { createRedisClient, isRedisCluster, redisKeyPrefix } from './redis-connection';
import { McpRedisOutageLog } from './redis-outage-log';

describe('redisKeyPrefix', () => {
  const cluster = { cluster: { nodes: [{ host: '127.0.0.1', port: 7000 }] } };

  it('hash-tags a prefix on a Cluster only, and keeps a prefix that carries a tag', () => {
    expect(isRedisCluster(cluster)).toBe(true);
    expect(isRedisCluster('redis://127.0.0.1:6379')).toBe(false);
    expect(isRedisCluster({ sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'm' })).toBe(false);
    expect(redisKeyPrefix('bull', cluster)).toBe('{bull}');
    expect(redisKeyPrefix('{mcp}:calls', cluster)).toBe('{mcp}:calls');
    expect(redisKeyPrefix('bull', 'redis://127.0.0.1:6379')).toBe('bull');
    expect(redisKeyPrefix('bull', undefined)).toBe('bull');
  });
});

describe('A Sentinel group', () => {
  let group: RedisSentinelGroup;
  let queue: Queue<{ n: number }> | undefined;
  let client: Redis | undefined;

  beforeAll(async () => {
    group = await startRedisSentinelGroup();
  }, 60_000);

  afterAll(async () => {
    await queue?.close().catch(() => undefined);
    client?.disconnect();
    await group?.destroy();
  });

  it('serves a Bull queue through the sentinels, and again after the master is killed, without a restart', async () => {
    const connection = { sentinels: group.sentinels, name: group.name };
    client = createRedisClient(connection, 'client', 'test') as Redis;
    // The test's own probe: its reconnection errors during the failover are expected.
    client.on('error', () => undefined);
    queue = createBullQueue<{ n: number }>(
      { feature: 'test', role: 'Queue', name: 'sentinel-calls', redis: connection },
      new McpRedisOutageLog({ warn: () => undefined, error: () => undefined }),
    );
    const runs: number[] = [];
    void queue.process(async (job) => {
      runs.push(job.data.n);
      return job.data.n * 2;
    });
    const first = await queue.add({ n: 1 });
    expect(await first.finished()).toBe(2);
    expect(Number((await client.info('server')).match(/tcp_port:(\d+)/)?.[1])).toBe(group.masterPort);

    const killedAt = Date.now();
    await group.killMaster();
    const recovered = await pollUntil(
      'the promoted replica answers through the sentinels',
      async () => {
        const port = await client!.info('server').then(
          (info) => Number(info.match(/tcp_port:(\d+)/)?.[1]),
          () => undefined,
        );
        return port === group.replicaPort ? port : undefined;
      },
      45_000,
      100,
    );
    expect(recovered).toBe(group.replicaPort);
    const second = await queue.add({ n: 2 });
    expect(await second.finished()).toBe(4);
    console.log(`Sentinel failover: the queue works again ${Date.now() - killedAt} ms after the master was killed`);
    expect(runs).toEqual([1, 2]);
  }, 60_000);
});
