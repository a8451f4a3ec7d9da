import type { Queue } from 'bull';
import { randomUUID } from 'node:crypto';
import { freeLoopbackPort } from '../../test/support/child-process';
import { pollUntil } from '../../test/support/polling';
import { TEST_REDIS_URL, deleteRedisKeys } from '../../test/support/redis';
import { createBullQueue, redisReady } from './bull-queue.factory';
import { McpRedisOutageLog, REDIS_OUTAGE_LOG_WINDOW_MS } from './redis-outage-log';

/** A logger that keeps what it was given. */
function recordingLogger() {
  const lines: Array<[level: string, line: string]> = [];
  return {
    lines,
    warn: (line: string) => void lines.push(['warn', line]),
    error: (line: string) => void lines.push(['error', line]),
  };
}

describe('McpRedisOutageLog', () => {
  it('logs each line once per window, at its level, and again once the window is over', () => {
    const logger = recordingLogger();
    let now = 0;
    const log = new McpRedisOutageLog(logger, 'error', REDIS_OUTAGE_LOG_WINDOW_MS, () => now);
    for (let i = 0; i < 5; i++) log.report('Queue "calls": connect ECONNREFUSED');
    log.report('Queue "calls": Connection is closed.');
    now += REDIS_OUTAGE_LOG_WINDOW_MS - 1;
    log.report('Queue "calls": connect ECONNREFUSED');
    now += 1;
    log.report('Queue "calls": connect ECONNREFUSED');
    expect(logger.lines).toEqual([
      ['error', 'Queue "calls": connect ECONNREFUSED'],
      ['error', 'Queue "calls": Connection is closed.'],
      ['error', 'Queue "calls": connect ECONNREFUSED'],
    ]);
  });

  it('remembers at most 100 lines, forgetting the oldest first, so distinct texts cannot grow it without bound', () => {
    const logger = recordingLogger();
    const log = new McpRedisOutageLog(logger, 'warn', 60_000, () => 0);
    for (let i = 0; i < 101; i++) log.report(`line ${i}`);
    log.report('line 1'); // still remembered: not logged again
    log.report('line 0'); // forgotten when line 100 came: logged again
    expect(logger.lines.map(([, line]) => line).slice(-1)).toEqual(['line 0']);
    expect(logger.lines).toHaveLength(102);
    expect(logger.lines.every(([level]) => level === 'warn')).toBe(true);
  });
});

describe('createBullQueue', () => {
  const queues: Queue<unknown>[] = [];
  const prefix = `bull-factory-${randomUUID().slice(0, 8)}`;
  afterAll(async () => {
    await Promise.all(queues.map((queue) => queue.close().catch(() => undefined)));
    await deleteRedisKeys(`${prefix}:*`);
  });

  it('reaches Redis by URL or by the options, and runs jobs', async () => {
    const url = new URL(TEST_REDIS_URL);
    const log = new McpRedisOutageLog(recordingLogger());
    const byUrl = createBullQueue<{ n: number }>(
      { feature: 'spec (Bull)', role: 'Spec queue', name: 'by-url', redis: TEST_REDIS_URL, options: { prefix } },
      log,
    );
    const byOptions = createBullQueue<{ n: number }>(
      {
        feature: 'spec (Bull)',
        role: 'Spec queue',
        name: 'by-options',
        options: { prefix, redis: { host: url.hostname, port: Number(url.port || 6379) } },
      },
      log,
    );
    queues.push(byUrl, byOptions);
    for (const queue of [byUrl, byOptions]) {
      await queue.isReady();
      await pollUntil(`${queue.name} to be ready`, async () => redisReady(queue) || undefined);
      const done = new Promise<number>((resolve) => void queue.process(async (job) => resolve(job.data.n)));
      await queue.add({ n: 7 });
      expect(await done).toBe(7);
    }
  });

  it('logs the errors of a Redis that does not answer once per window, naming the queue, and is not ready', async () => {
    const logger = recordingLogger();
    const port = await freeLoopbackPort();
    let attempts = 0;
    // ioredis tries 20 times, 10 ms apart (each failure an 'error' of the queue), then gives up.
    const retryStrategy = (times: number) => ((attempts = times) > 20 ? null : 10);
    const queue = createBullQueue(
      {
        feature: 'spec (Bull)',
        role: 'Task queue',
        name: 'nowhere',
        options: { redis: { host: '127.0.0.1', port, retryStrategy } },
      },
      new McpRedisOutageLog(logger),
    );
    await pollUntil('ioredis to give up', async () => (attempts > 20 ? true : undefined));
    expect(redisReady(queue)).toBe(false);
    expect(logger.lines).toEqual([['warn', expect.stringMatching(/^Task queue "nowhere": .*ECONNREFUSED/)]]);
    await queue.close().catch(() => undefined);
  });
});
