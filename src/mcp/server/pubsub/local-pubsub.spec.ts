import { McpLocalEventLog } from './local-event-log';
import { McpLocalPubSub } from './local-pubsub';

const T0 = Date.UTC(2025, 0, 1);

describe('McpLocalPubSub', () => {
  afterEach(() => jest.useRealTimers());

  it('delivers to the listeners of a channel only, stops after unsubscribe, and accepts a publish nobody hears', async () => {
    const pubsub = new McpLocalPubSub();
    const got: string[] = [];
    const listener = (payload: string) => got.push(`a:${payload}`);
    await pubsub.subscribe('one', listener);
    await pubsub.subscribe('one', (payload) => got.push(`b:${payload}`));
    await pubsub.subscribe('two', (payload) => got.push(`two:${payload}`));
    await pubsub.publish('one', 'x');
    await pubsub.unsubscribe('one', listener);
    await pubsub.unsubscribe('never-subscribed', listener);
    await pubsub.publish('one', 'y');
    await pubsub.publish('nobody', 'z');
    expect(got).toEqual(['a:x', 'b:x', 'b:y']);
    expect(pubsub.distributed).toBe(false);
  });

  it('lets one owner hold a claim until it expires or is released by that owner', async () => {
    jest.useFakeTimers({ now: T0 });
    const pubsub = new McpLocalPubSub();
    expect(await pubsub.claim('k', 'one', 1000)).toBe(true);
    expect(await pubsub.claim('k', 'two', 1000)).toBe(false);
    expect(await pubsub.claim('k', 'one', 1000)).toBe(true);
    await pubsub.release('k', 'two');
    expect(await pubsub.claim('k', 'two', 1000)).toBe(false);
    jest.setSystemTime(T0 + 1000);
    expect(await pubsub.claim('k', 'two', 1000)).toBe(true);
    await pubsub.release('k', 'two');
    expect(await pubsub.claim('k', 'one', 1000)).toBe(true);
  });

  it('forgets listeners and claims on close', async () => {
    const pubsub = new McpLocalPubSub();
    const got: string[] = [];
    await pubsub.subscribe('one', (payload) => got.push(payload));
    await pubsub.claim('k', 'one', 60_000);
    await pubsub.close();
    await pubsub.publish('one', 'x');
    expect(got).toEqual([]);
    expect(await pubsub.claim('k', 'two', 60_000)).toBe(true);
  });
});

describe('McpLocalEventLog', () => {
  afterEach(() => jest.useRealTimers());

  it('numbers events per stream, or takes the sequence it is given and numbers on from it, and replays those after a sequence', async () => {
    const log = new McpLocalEventLog({ maxEvents: 10, ttlMs: 60_000 });
    expect(await log.append('s', 'session', 'a')).toBe(1);
    expect(await log.append('s', 'session', 'b')).toBe(2);
    expect(await log.append('s', 'req', 'r', { seq: 5, final: true })).toBe(5);
    expect(await log.lastSeq('s', 'req')).toBe(5);
    expect(await log.after('s', 'session', 1)).toEqual([{ seq: 2, data: 'b', final: false }]);
    expect(await log.after('s', 'req', 0)).toEqual([{ seq: 5, data: 'r', final: true }]);
    expect(await log.append('s', 'req', 'next')).toBe(6);
    expect(await log.after('other', 'session', 0)).toEqual([]);
    expect(await log.lastSeq('other', 'session')).toBe(0);
  });

  it('keeps only the newest maxEvents of a stream', async () => {
    const log = new McpLocalEventLog({ maxEvents: 2, ttlMs: 60_000 });
    for (const data of ['a', 'b', 'c']) await log.append('s', 'x', data);
    expect((await log.after('s', 'x', 0)).map((event) => event.data)).toEqual(['b', 'c']);
    expect(await log.lastSeq('s', 'x')).toBe(3);
  });

  it('drops a stream once its ttl passed since its last event, on read and as new events arrive', async () => {
    jest.useFakeTimers({ now: T0 });
    const log = new McpLocalEventLog({ maxEvents: 10, ttlMs: 1000 });
    await log.append('s', 'old', 'a');
    jest.setSystemTime(T0 + 500);
    await log.append('s', 'newer', 'b');
    jest.setSystemTime(T0 + 1000);
    expect(await log.after('s', 'old', 0)).toEqual([]);
    expect(log.size).toBe(1);
    jest.setSystemTime(T0 + 1400);
    await log.append('s', 'third', 'c');
    expect(log.size).toBe(2);
    jest.setSystemTime(T0 + 1500);
    await log.append('s', 'fourth', 'd');
    expect(log.size).toBe(2);
    expect(await log.lastSeq('s', 'newer')).toBe(0);
    expect(await log.append('s', 'old', 'again')).toBe(1);
  });

  it('forgets a stream on request', async () => {
    const log = new McpLocalEventLog({ maxEvents: 10, ttlMs: 60_000 });
    await log.append('s', 'x', 'a');
    await log.forget('s', 'x');
    expect(log.size).toBe(0);
    expect(await log.lastSeq('s', 'x')).toBe(0);
  });

  it('keeps at most ten thousand streams, dropping the one written longest ago', async () => {
    const log = new McpLocalEventLog({ maxEvents: 1, ttlMs: 60_000 });
    for (let i = 0; i <= 10_000; i++) await log.append('s', `stream-${i}`, 'x');
    expect(log.size).toBe(10_000);
    expect(await log.lastSeq('s', 'stream-0')).toBe(0);
    expect(await log.lastSeq('s', 'stream-1')).toBe(1);
    expect(await log.lastSeq('s', 'stream-10000')).toBe(1);
  });
});
