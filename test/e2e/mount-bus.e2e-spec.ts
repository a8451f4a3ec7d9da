import { Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { McpRedisPubSub } from '../../src/mcp/server/pubsub/redis-pubsub';
import { McpMountBus, type McpMountBusMessages } from '../../src/mcp/server/pubsub/mount-bus';
import { pollUntil } from '../faults/support/free-port';
import { TEST_REDIS_URL } from '../support/redis';

/**
 * The typed bus of a mount on a real Redis: two replicas' buses on the same mount and prefix meet
 * on `<channelPrefix>:<mount>:<channel>`, each message comes back as it was sent, and what another
 * writer puts on a channel (not JSON, or not of the channel's shape) is dropped with a warning
 * before any listener sees it.
 */
describe('McpMountBus on Redis: the channels of a mount, typed', () => {
  const prefix = `mount-bus-${randomUUID().slice(0, 8)}`;
  const options = { mount: 'orders', pubsub: { channelPrefix: prefix, timeoutMs: 2_000 } };
  const pubsubs: McpRedisPubSub[] = [];
  let raw: Redis;
  let warnings: string[];

  const replica = () => {
    const pubsub = new McpRedisPubSub(TEST_REDIS_URL, 2_000);
    pubsubs.push(pubsub);
    return new McpMountBus(options, pubsub);
  };

  beforeAll(() => {
    raw = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
  });

  beforeEach(() => {
    warnings = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
  });

  afterEach(() => jest.restoreAllMocks());

  afterAll(async () => {
    raw.disconnect();
    await Promise.all(pubsubs.map((pubsub) => pubsub.close()));
  });

  it('names channels and keys after the prefix and the mount', () => {
    const bus = replica();
    expect(bus.distributed).toBe(true);
    expect(bus.key()).toBe(`${prefix}:orders`);
    expect(bus.key('stream', 'session-1')).toBe(`${prefix}:orders:stream:session-1`);
  });

  it("delivers each channel's messages from one replica to the other as they were sent", async () => {
    const [sender, receiver] = [replica(), replica()];
    const sent: { [C in keyof McpMountBusMessages]: McpMountBusMessages[C] } = {
      'session-bus': {
        t: 'notify',
        o: 'a',
        s: 'session-1',
        m: { jsonrpc: '2.0', method: 'notifications/message' },
        q: 7,
      },
      tasks: { t: 'i', id: 'task-1', key: 'elicitation-1', result: { action: 'accept' } },
      registry: { o: 'a', m: 'notifications/tools/list_changed', r: true },
      listen: { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'file:///a' } },
      gateway: { o: 'a', s: 'tickets', k: 'prompts' },
    };
    const received: Partial<Record<keyof McpMountBusMessages, unknown[]>> = {};
    const stops = await Promise.all(
      (Object.keys(sent) as (keyof McpMountBusMessages)[]).map((channel) =>
        receiver.subscribe(channel, (message) => void (received[channel] ??= []).push(message)),
      ),
    );
    for (const [channel, message] of Object.entries(sent))
      await sender.publish(channel as keyof McpMountBusMessages, message);
    await pollUntil(
      'every channel to deliver',
      async () =>
        Object.keys(sent).every((channel) => received[channel as keyof McpMountBusMessages]?.length) || undefined,
    );
    expect(received).toEqual(
      Object.fromEntries(Object.entries(sent).map(([channel, message]) => [channel, [message]])),
    );
    expect(warnings).toEqual([]);
    await Promise.all(stops.map((stop) => stop()));
  });

  it('drops a payload that is not JSON, or not of its channel’s shape, with a warning; the next good one arrives', async () => {
    const bus = replica();
    const received: unknown[] = [];
    const stop = await bus.subscribe('tasks', (message) => void received.push(message));
    const channel = `${prefix}:orders:tasks`;
    await raw.publish(channel, 'not json');
    await raw.publish(channel, JSON.stringify({ t: 'x', id: 'task-1' }));
    await raw.publish(channel, JSON.stringify({ t: 'i', id: 'task-1', key: 'k' }));
    await raw.publish(channel, JSON.stringify({ t: 'c', id: 42 }));
    await raw.publish(channel, JSON.stringify({ t: 'c', id: 'task-2' }));
    await pollUntil('the well-formed message', async () => received.length || undefined);
    expect(received).toEqual([{ t: 'c', id: 'task-2' }]);
    expect(warnings).toEqual([
      'Ignored a tasks message that is not JSON',
      'Ignored a malformed tasks message',
      'Ignored a malformed tasks message',
      'Ignored a malformed tasks message',
    ]);
    await stop();
  });

  it('checks the session-bus shapes: a notify without its sequence number or an answer that is not a response is dropped', async () => {
    const bus = replica();
    const received: unknown[] = [];
    const stop = await bus.subscribe('session-bus', (message) => void received.push(message));
    const channel = `${prefix}:orders:session-bus`;
    const notification = { jsonrpc: '2.0', method: 'notifications/message' };
    await raw.publish(channel, JSON.stringify({ t: 'notify', o: 'b', s: 's', m: notification }));
    await raw.publish(channel, JSON.stringify({ t: 'answer', o: 'b', s: 's', m: notification }));
    await raw.publish(channel, JSON.stringify({ t: 'end', o: 'b', s: 's', p: 7 }));
    await raw.publish(
      channel,
      JSON.stringify({ t: 'answer', o: 'b', s: 's', m: { jsonrpc: '2.0', id: 3, result: {} } }),
    );
    await pollUntil('the well-formed answer', async () => received.length || undefined);
    expect(received).toEqual([{ t: 'answer', o: 'b', s: 's', m: { jsonrpc: '2.0', id: 3, result: {} } }]);
    expect(warnings).toEqual(Array(3).fill('Ignored a malformed session-bus message'));
    await stop();
  });

  it('checks the gateway shape: an unknown list or a missing server is dropped', async () => {
    const bus = replica();
    const received: unknown[] = [];
    const stop = await bus.subscribe('gateway', (message) => void received.push(message));
    const channel = `${prefix}:orders:gateway`;
    await raw.publish(channel, JSON.stringify({ o: 'b', s: 'tickets', k: 'templates' }));
    await raw.publish(channel, JSON.stringify({ o: 'b', k: 'tools' }));
    await raw.publish(channel, JSON.stringify({ o: 'b', s: 'tickets', k: 'resources' }));
    await pollUntil('the well-formed message', async () => received.length || undefined);
    expect(received).toEqual([{ o: 'b', s: 'tickets', k: 'resources' }]);
    expect(warnings).toEqual(Array(2).fill('Ignored a malformed gateway message'));
    await stop();
  });

  it('keeps delivering when a listener throws or rejects, and stops after unsubscribing', async () => {
    const [sender, receiver] = [replica(), replica()];
    const seen: string[] = [];
    const stop = await receiver.subscribe('registry', (message) => {
      seen.push(message.m);
      if (message.m === 'throws') throw new Error('listener bug');
      if (message.m === 'rejects') return Promise.reject(new Error('async listener bug'));
    });
    for (const m of ['throws', 'rejects', 'fine']) await sender.publish('registry', { o: 'a', m, r: false });
    await pollUntil('three messages', async () => (seen.length === 3 ? true : undefined));
    await pollUntil('both failures logged', async () => (warnings.length === 2 ? true : undefined));
    expect(warnings.sort()).toEqual([
      'A registry message could not be handled: async listener bug',
      'A registry message could not be handled: listener bug',
    ]);
    await stop();
    await sender.publish('registry', { o: 'a', m: 'after', r: false });
    // A marker on a second subscription proves the message went out; the first saw nothing more.
    const marker: string[] = [];
    const stopMarker = await receiver.subscribe('registry', (message) => void marker.push(message.m));
    await sender.publish('registry', { o: 'a', m: 'marker', r: false });
    await pollUntil('the marker', async () => marker.length || undefined);
    expect(seen).toEqual(['throws', 'rejects', 'fine']);
    await stopMarker();
  });
});
