import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { McpBusUnavailableError } from '../../src/mcp/errors/mcp-outage.errors';
import { McpRedisPubSub } from '../../src/mcp/server/pubsub/redis-pubsub';
import { freeLoopbackPort } from '../support/child-process';
import { deleteRedisKeys, TEST_REDIS_ADDRESS } from '../support/redis';

async function until(check: () => boolean, what: string, deadlineMs = 10_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * `McpRedisPubSub` against the real Redis: instances built from the same connection options
 * share their connections, a closed instance fails fast with `McpBusUnavailableError`, and a
 * Redis that cannot be reached is logged once per window, not once per reconnection attempt.
 */
describe('McpRedisPubSub on real Redis', () => {
  const prefix = `pubsub-e2e-${randomBytes(6).toString('hex')}`;
  const opened: McpRedisPubSub[] = [];
  const open = (config: ConstructorParameters<typeof McpRedisPubSub>[0], timeoutMs?: number) => {
    const pubsub = new McpRedisPubSub(config, timeoutMs);
    opened.push(pubsub);
    return pubsub;
  };

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((pubsub) => pubsub.close()));
    jest.restoreAllMocks();
  });

  afterAll(async () => {
    await deleteRedisKeys(`${prefix}*`);
  });

  it('shares connections between instances of the same options object, and delivers to every listener of a channel', async () => {
    const options = { host: TEST_REDIS_ADDRESS.host, port: TEST_REDIS_ADDRESS.port, db: 0, connectionName: prefix };
    const a = open({ ...options });
    const b = open({ ...options });
    expect(a.commands).toBe(b.commands);
    const got: string[] = [];
    await a.subscribe(`${prefix}:ch`, (payload) => got.push(`a:${payload}`));
    await b.subscribe(`${prefix}:ch`, (payload) => got.push(`b:${payload}`));
    await b.publish(`${prefix}:ch`, 'hello');
    await until(() => got.length === 2, 'both listeners got the message');
    expect(got.sort()).toEqual(['a:hello', 'b:hello']);
    await a.close();
    await a.close();
    await b.publish(`${prefix}:ch`, 'again');
    await until(() => got.length === 3, "b's listener got the second message");
    expect(got[2]).toBe('b:again');
  });

  it('claims a key for one owner at a time, extends it for that owner, and releases it only for that owner', async () => {
    const pubsub = open(`redis://${TEST_REDIS_ADDRESS.host}:${TEST_REDIS_ADDRESS.port}`);
    const key = `${prefix}:claim`;
    expect(await pubsub.claim(key, 'one', 10_000)).toBe(true);
    expect(await pubsub.claim(key, 'two', 10_000)).toBe(false);
    expect(await pubsub.claim(key, 'one', 10_000)).toBe(true);
    await pubsub.release(key, 'two');
    expect(await pubsub.claim(key, 'two', 10_000)).toBe(false);
    await pubsub.release(key, 'one');
    expect(await pubsub.claim(key, 'two', 10_000)).toBe(true);
  });

  it('fails a command at once with McpBusUnavailableError once its connections were closed', async () => {
    const pubsub = new McpRedisPubSub({
      host: TEST_REDIS_ADDRESS.host,
      port: TEST_REDIS_ADDRESS.port,
      connectionName: `${prefix}-closed`,
    });
    await pubsub.publish(`${prefix}:x`, 'fine');
    await pubsub.close();
    await expect(pubsub.publish(`${prefix}:x`, 'late')).rejects.toThrow(McpBusUnavailableError);
    await expect(pubsub.publish(`${prefix}:x`, 'late')).rejects.toThrow('publish (the connection is end)');
  });

  it('logs an unreachable Redis once per connection and window, however often it retries, and refuses commands meanwhile', async () => {
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const port = await freeLoopbackPort();
    const pubsub = open({ host: '127.0.0.1', port, connectionName: `${prefix}-down` });
    let errors = 0;
    pubsub.commands.on('error', () => errors++);
    await until(
      () => errors >= 3 && pubsub.commands.status === 'reconnecting',
      'the publisher failed to connect three times',
    );
    const lines = warned.mock.calls.map(([line]) => String(line)).filter((line) => line.includes(`${port}`));
    expect(lines.filter((line) => line.startsWith('Redis publisher: '))).toHaveLength(1);
    expect(lines.filter((line) => line.startsWith('Redis subscriber: '))).toHaveLength(1);
    await expect(pubsub.publish(`${prefix}:x`, 'lost')).rejects.toThrow('publish (the connection is reconnecting)');
  });
});
