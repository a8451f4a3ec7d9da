import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { TEST_REDIS_URL } from '../../../../test/support/redis';
import { createRedisClient } from '../../redis-connection';
import { BullCallChannels } from './bull-call-channels';

describe('BullCallChannels', () => {
  const opened: Redis[] = [];
  const channels: BullCallChannels[] = [];
  const connect = () => {
    const redis = createRedisClient(TEST_REDIS_URL, 'client', 'test') as Redis;
    opened.push(redis);
    return redis;
  };
  afterAll(() => {
    channels.forEach((channel) => channel.close());
    opened.forEach((redis) => redis.disconnect());
  });

  it.each([
    ['a duplicate of the queue connection (a host that gives its own createClient)', undefined],
    ['a subscriber connection to the Redis it is given', TEST_REDIS_URL],
  ])('delivers what is published on a call channel through %s, until unsubscribed', async (_what, redis) => {
    const client = connect();
    const calls = new BullCallChannels(client, `channels-${randomUUID()}:calls`, redis);
    channels.push(calls);
    const got: string[] = [];
    const channel = calls.eventsChannel('call-1');
    const unsubscribe = await calls.subscribe(channel, (message) => got.push(message));
    expect(calls.subscriptions).toBe(1);
    await client.publish(channel, 'progress');
    await unsubscribe();
    expect(got).toEqual(['progress']);
    expect(calls.subscriptions).toBe(0);
  });
});
