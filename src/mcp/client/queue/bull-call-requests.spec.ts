import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { pollUntil } from '../../../../test/support/polling';
import { TEST_REDIS_URL } from '../../../../test/support/redis';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { createRedisClient } from '../../redis-connection';
import { BullCallChannels } from './bull-call-channels';
import { BullCallRequestRelay, answerCallRequests } from './bull-call-requests';

describe('the relay of a Bull call’s server requests (real Redis)', () => {
  const opened: Redis[] = [];
  const channels: BullCallChannels[] = [];
  const setup = () => {
    const redis = createRedisClient(TEST_REDIS_URL, 'client', 'test') as Redis;
    opened.push(redis);
    const calls = new BullCallChannels(redis, `relay-${randomUUID()}:calls`, TEST_REDIS_URL);
    channels.push(calls);
    return { redis, calls, id: randomUUID() };
  };
  afterAll(() => {
    channels.forEach((channel) => channel.close());
    opened.forEach((redis) => redis.disconnect());
  });
  const request = { method: 'elicitation/create', params: { message: 'Your name?' } };

  it('brings the answer back, and the answerer’s error with its code and data (any other failure as -32603)', async () => {
    const { redis, calls, id } = setup();
    let n = 0;
    const stop = await answerCallRequests(redis, calls, id, 60_000, async (asked) => {
      n++;
      if (n === 1) return { action: 'accept', content: { name: String(asked.params.message) } };
      if (n === 2) throw new McpRpcError(-32602, 'no form', { field: 'name' });
      throw new Error('broken');
    });
    const relay = new BullCallRequestRelay(redis, calls, id, Date.now() + 60_000);
    await expect(relay.answer(request, {})).resolves.toEqual({ action: 'accept', content: { name: 'Your name?' } });
    await expect(relay.answer(request, {})).rejects.toMatchObject({
      code: -32602,
      message: 'no form',
      data: { field: 'name' },
    });
    await expect(relay.answer(request, {})).rejects.toMatchObject({ code: -32603, message: 'broken' });
    await relay.close();
    await stop();
    expect(await redis.exists(calls.answererKey(id))).toBe(0);
    expect(calls.subscriptions).toBe(0);
  });

  it('runs the handler once for a request published twice (a PUBLISH ioredis sent again after its reply was lost)', async () => {
    const { redis, calls, id } = setup();
    const handled: unknown[] = [];
    const stop = await answerCallRequests(redis, calls, id, 60_000, async (asked) => {
      handled.push(asked.params);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    const listener = createRedisClient(TEST_REDIS_URL, 'subscriber', 'test') as Redis;
    opened.push(listener);
    const answers: string[] = [];
    listener.on('message', (_channel: string, message: string) => answers.push(message));
    await listener.subscribe(calls.answersChannel(id));
    const message = JSON.stringify({ rid: 'r-1', ...request });
    await redis.publish(calls.requestsChannel(id), message);
    await redis.publish(calls.requestsChannel(id), message);
    await redis.publish(calls.requestsChannel(id), JSON.stringify({ rid: 'r-2', ...request }));
    // Published after the three requests: once the caller has answered r-2, r-1's copy was read too.
    await pollUntil('the answer to r-2', () => (answers.some((answer) => answer.includes('"r-2"')) ? true : undefined));
    expect(handled).toEqual([request.params, request.params]);
    expect(answers.map((answer) => (JSON.parse(answer) as { rid: string }).rid)).toEqual(['r-1', 'r-2']);
    await stop();
  });

  it('gives -32603 at once when the caller is gone, at the deadline when it is silent, and when the request is cancelled', async () => {
    const { redis, calls, id } = setup();
    const gone = new BullCallRequestRelay(redis, calls, id, Date.now() + 60_000);
    await expect(gone.answer(request, {})).rejects.toMatchObject({
      code: -32603,
      message: expect.stringMatching(/gone/),
    });
    await gone.close();
    // A caller that marked itself but never answers (its process hangs).
    await redis.set(calls.answererKey(id), 'silent', 'PX', 60_000);
    const silent = new BullCallRequestRelay(redis, calls, id, Date.now());
    await expect(silent.answer(request, {})).rejects.toMatchObject({
      code: -32603,
      message: expect.stringMatching(/deadline/),
    });
    const cancelled = new BullCallRequestRelay(redis, calls, id, Date.now() + 60_000);
    const controller = new AbortController();
    controller.abort();
    await expect(cancelled.answer(request, { signal: controller.signal })).rejects.toMatchObject({
      code: -32603,
      message: expect.stringMatching(/cancelled/),
    });
    await Promise.all([silent.close(), cancelled.close()]);
    await redis.del(calls.answererKey(id));
    expect(calls.subscriptions).toBe(0);
  });
});
