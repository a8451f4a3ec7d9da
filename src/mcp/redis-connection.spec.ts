import type { Queue } from 'bull';
import type { ClusterNode, Redis } from 'ioredis';
import { freeLoopbackPort } from '../../test/support/child-process';
import { pollUntil } from '../../test/support/polling';
import { TEST_REDIS_ADDRESS, TEST_REDIS_URL } from '../../test/support/redis';
import { startRedisSentinelGroup, type RedisSentinelGroup } from '../../test/support/redis-sentinel-group';
import { resolveClientOptions } from './client/config/client-options-resolver';
import { McpConfigurationError } from './errors/mcp-configuration.errors';
import { bullKeyPrefix, createBullQueue } from './bull-queue.factory';
import {
  connectedReplicasOf,
  createRedisClient,
  defaultMarkReplicas,
  hashTagged,
  isClusterClient,
  isRedisCluster,
  isSentinelClient,
  redisKeyPrefix,
  redisKeySlot,
} from './redis-connection';
import { resolveMcpOptions } from './server/config/mcp.options';
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

describe('hashTagged and bullKeyPrefix', () => {
  const cluster = { cluster: { nodes: ['127.0.0.1:7000'] } };

  it('tags a key once, and tags Bull prefixes only for a Cluster the queue connects to itself', () => {
    expect(hashTagged('mcp:main:events:s:1')).toBe('{mcp:main:events:s:1}');
    expect(hashTagged('{mcp}:main:events:s:1')).toBe('{mcp}:main:events:s:1');
    expect(bullKeyPrefix({ redis: cluster })).toBe('{bull}');
    expect(bullKeyPrefix({ options: { redis: cluster as never, prefix: 'calls' } })).toBe('{calls}');
    expect(bullKeyPrefix({ options: { prefix: 'calls' } })).toBe('calls');
    expect(bullKeyPrefix({ options: { redis: 'redis://127.0.0.1:6379' } })).toBe('bull');
    // Bull's own createClient: the host connects, the prefix is the host's.
    expect(
      bullKeyPrefix({ options: { redis: cluster as never, prefix: 'calls', createClient: () => null as never } }),
    ).toBe('calls');
  });
});

describe('redisKeySlot', () => {
  it('computes CLUSTER KEYSLOT: CRC16 of the key or of its first non-empty tag, modulo 16384', () => {
    expect(redisKeySlot('foo')).toBe(12182);
    expect(redisKeySlot('bar')).toBe(5061);
    expect(redisKeySlot('')).toBe(0);
    // A tag hashes alone; an empty tag does not count, and only the first one does.
    expect(redisKeySlot('{user1000}.following')).toBe(redisKeySlot('user1000'));
    expect(redisKeySlot('{user1000}.following')).toBe(3443);
    expect(redisKeySlot('a{b}c')).toBe(redisKeySlot('b'));
    expect(redisKeySlot('{}x')).toBe(10595);
    expect(redisKeySlot('{a}{b}')).toBe(redisKeySlot('a'));
    // The first `{` is followed by `}` at once: the whole key is hashed (values read from Redis 7).
    expect(redisKeySlot('abc{}{def}')).toBe(1851);
    expect(redisKeySlot('{unclosed')).toBe(470);
    expect(redisKeySlot('é{')).toBe(6077);
  });

  it('tells a Cluster connection from a single node', () => {
    const single = createRedisClient(TEST_REDIS_URL, 'client', 'test', { lazyConnect: true });
    const cluster = createRedisClient(
      { cluster: { nodes: [TEST_REDIS_ADDRESS], options: { lazyConnect: true } } },
      'client',
      'test',
    );
    try {
      expect(isClusterClient(single)).toBe(false);
      expect(isClusterClient(cluster)).toBe(true);
    } finally {
      single.disconnect();
      cluster.disconnect();
    }
  });

  it("marks wait by default as 'auto' on a Sentinel group or a Cluster, for no replica on a single node", () => {
    const lazy = { lazyConnect: true };
    const clients = {
      url: createRedisClient(TEST_REDIS_URL, 'client', 'test', lazy),
      options: createRedisClient({ ...TEST_REDIS_ADDRESS, ...lazy }, 'client', 'test'),
      sentinel: createRedisClient(
        { sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'mymaster', ...lazy },
        'client',
        'test',
      ),
      cluster: createRedisClient({ cluster: { nodes: [TEST_REDIS_ADDRESS], options: lazy } }, 'client', 'test'),
    };
    try {
      expect(Object.values(clients).map(isSentinelClient)).toEqual([false, false, true, false]);
      expect(Object.values(clients).map(defaultMarkReplicas)).toEqual([0, 0, 'auto', 'auto']);
    } finally {
      Object.values(clients).forEach((client) => client.disconnect());
    }
  });
});

describe('connectedReplicasOf', () => {
  it("counts the replicas a master's ROLE lists", () => {
    expect(connectedReplicasOf(['master', 3129659, []])).toBe(0);
    expect(
      connectedReplicasOf([
        'master',
        3129659,
        [
          ['127.0.0.1', '9001', '3129242'],
          ['127.0.0.1', '9002', '3129543'],
        ],
      ]),
    ).toBe(2);
  });

  it("says nothing of a replica's, a sentinel's or any other reply", () => {
    expect(connectedReplicasOf(['slave', '127.0.0.1', 9000, 'connected', 3167038])).toBeUndefined();
    expect(connectedReplicasOf(['sentinel', ['resque-master', 'html-fragments-master']])).toBeUndefined();
    expect(connectedReplicasOf(['master', 3129659])).toBeUndefined();
    expect(connectedReplicasOf('master')).toBeUndefined();
    expect(connectedReplicasOf(null)).toBeUndefined();
  });

  it('reads the ROLE reply of the test Redis, a master', async () => {
    const redis = createRedisClient(TEST_REDIS_URL, 'client', 'test');
    try {
      expect(connectedReplicasOf(await redis.role())).toEqual(expect.any(Number));
    } finally {
      redis.disconnect();
    }
  });
});

describe('The subscriber connection of a Cluster', () => {
  const opened: Redis[] = [];
  afterAll(() => opened.forEach((redis) => redis.disconnect()));
  const subscriber = (nodes: ClusterNode[]) => {
    const redis = createRedisClient(
      { cluster: { nodes, options: { redisOptions: { lazyConnect: true } } } },
      'subscriber',
      'test',
    ) as Redis;
    opened.push(redis);
    redis.on('error', () => undefined);
    return redis;
  };

  it("starts at the first seed node, as ioredis reads it ('host', 'host:port', a URL, a port, { host, port })", () => {
    expect(subscriber(['cache-0']).options).toMatchObject({ host: 'cache-0', port: 6379 });
    expect(subscriber(['cache-1:7001']).options).toMatchObject({ host: 'cache-1', port: 7001 });
    expect(subscriber(['redis://cache-2:7002']).options).toMatchObject({ host: 'cache-2', port: 7002 });
    expect(subscriber([':7005']).options).toMatchObject({ host: '127.0.0.1', port: 7005 });
    expect(subscriber([7003]).options).toMatchObject({ host: '127.0.0.1', port: 7003 });
    expect(subscriber([{}]).options).toMatchObject({ host: '127.0.0.1', port: 6379 });
    expect(subscriber([{ host: 'cache-4', port: 7004 }]).options).toMatchObject({
      host: 'cache-4',
      port: 7004,
      enableReadyCheck: false,
    });
  });

  it('moves on to the next seed node while one refuses, and receives what is published', async () => {
    const down = [await freeLoopbackPort(), await freeLoopbackPort()];
    const redis = subscriber([down[0], { host: '127.0.0.1', port: down[1] }, `127.0.0.1:${TEST_REDIS_ADDRESS.port}`]);
    const channel = `cluster-subscriber-${Date.now()}`;
    const got = new Promise<string>((resolve) =>
      redis.on('message', (_channel: string, message: string) => resolve(message)),
    );
    await redis.subscribe(channel);
    expect(redis.options.port).toBe(TEST_REDIS_ADDRESS.port);
    const publisher = createRedisClient(TEST_REDIS_URL, 'client', 'test') as Redis;
    opened.push(publisher);
    await publisher.publish(channel, 'hello');
    expect(await got).toBe('hello');
  });
});

describe('The redis option of McpModule and McpClientModule', () => {
  const server = (redis: unknown) => () =>
    resolveMcpOptions({ auth: () => null, redis } as never, { mount: 'main', path: 'mcp' });
  const client = (redis: unknown) => () => resolveClientOptions({ redis } as never);

  it('accepts a URL, ioredis options, a Sentinel group and a Cluster, and hands them on as they are', () => {
    const sentinel = { sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'mymaster' };
    const cluster = { cluster: { nodes: ['127.0.0.1:7000', 7001, { host: '127.0.0.1', port: 7002 }], options: {} } };
    for (const redis of [
      'redis://127.0.0.1:6379',
      'rediss://cache.example:6380/2',
      { host: '127.0.0.1' },
      sentinel,
      cluster,
    ]) {
      expect(server(redis)().redis).toBe(redis);
      expect(server(redis)().tasks.redis).toBe(redis);
      expect(client(redis)().queue.bull?.redis).toBe(redis);
    }
    expect(server(undefined)().redis).toBeUndefined();
    expect(server(undefined)().tasks.redis).toBeNull();
    expect(client(undefined)().queue.bull).toBeNull();
  });

  it.each([
    ['localhost:6379', 'redis', 'a redis:// or rediss:// URL'],
    [42, 'redis', 'a redis:// or rediss:// URL'],
    [['redis://127.0.0.1'], 'redis', 'a redis:// or rediss:// URL'],
    [{ cluster: { nodes: [] } }, 'redis.cluster.nodes', 'a non-empty list of seed nodes'],
    [{ cluster: { nodes: [''] } }, 'redis.cluster.nodes', 'a non-empty list of seed nodes'],
    [{ cluster: { nodes: [0] } }, 'redis.cluster.nodes', 'a non-empty list of seed nodes'],
    [{ cluster: { nodes: [{ host: 'a', port: '7000' }] } }, 'redis.cluster.nodes', 'a non-empty list of seed nodes'],
    [{ cluster: { nodes: [true] } }, 'redis.cluster.nodes', 'a non-empty list of seed nodes'],
    [{ cluster: ['127.0.0.1:7000'] }, 'redis.cluster', 'an object ({ nodes, options? })'],
    [{ cluster: { nodes: [7000], options: 'x' } }, 'redis.cluster.options', 'ioredis Cluster options'],
    [{ sentinels: [{ host: '127.0.0.1', port: 26379 }] }, 'redis.name', 'the name of the master the sentinels watch'],
    [{ sentinels: [{ host: '127.0.0.1', port: 26379 }], name: '' }, 'redis.name', 'the name of the master'],
    [{ sentinels: [], name: 'm' }, 'redis.sentinels', 'a non-empty list of sentinel addresses'],
    [{ sentinels: ['127.0.0.1:26379'], name: 'm' }, 'redis.sentinels', 'a non-empty list of sentinel addresses'],
  ])('refuses %j at boot, naming the option %s', (redis, option, expected) => {
    for (const resolve of [server(redis), client(redis)]) {
      expect(resolve).toThrow(McpConfigurationError);
      expect(resolve).toThrow(`option "${option}" must be ${expected}`);
    }
  });

  it('never repeats the URL it refuses (it may carry a password)', () => {
    expect(server('http://user:s3cret@cache:6379')).toThrow(McpConfigurationError);
    let message = '';
    try {
      client('http://user:s3cret@cache:6379')();
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('McpClientModule option "redis" must be a redis:// or rediss:// URL');
    expect(message).not.toContain('s3cret');
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
