import { McpQueueUnavailableError } from '../../src/mcp/errors';
import { resolveClientOptions } from '../../src/mcp/client/config/client-options-resolver';
import { McpCallProcessor } from '../../src/mcp/client/mcp-call-processor';
import { BullCallQueue } from '../../src/mcp/client/queue/bull-call-queue';
import { pollUntil } from './support/free-port';
import { startPrivateRedis, type PrivateRedis } from './support/private-redis';

/**
 * The at-most-once mark of a queued tools/call is written to Redis (SET NX) before the call is
 * handed to its transport. When Redis is lost between the job's pickup and that mark, the call
 * must not be sent: the processor fails with `McpQueueUnavailableError` (`delivered: false`) and
 * the transport never sees the tools/call. The processor is the real one; only its
 * collaborators that would need a server are stand-ins, and Redis is real.
 */
describe('at-most-once mark when Redis is lost before it is written', () => {
  let redis: PrivateRedis;
  let queue: BullCallQueue | undefined;

  beforeAll(async () => {
    redis = await startPrivateRedis();
  });

  afterAll(async () => {
    await redis?.start();
    await queue?.close();
    await redis?.destroy();
  });

  it('fails the call with McpQueueUnavailableError (delivered: false) and never sends the tools/call', async () => {
    const sent: string[] = [];
    let killedAt = Number.NaN;
    let outcome: ((value: unknown) => void) | undefined;
    const settled = new Promise((resolve) => (outcome = resolve));
    const processor = new McpCallProcessor(
      { config: () => ({}) } as never,
      { find: async () => ({ serverCapabilities: { tools: {} }, protocolVersion: '2025-11-25' }) } as never,
      {
        call: async ({ method }: { method: string }) => {
          sent.push(method);
          return { result: { content: [] }, session: null };
        },
      } as never,
      {
        // Runs after the job was picked up and before the mark: Redis dies right here.
        resolve: async () => {
          killedAt = Date.now();
          await redis.kill();
          await pollUntil('the queue connection to drop', async () =>
            queue?.bull.client.status === 'ready' ? undefined : true,
          );
          return { era: 'session' };
        },
      } as never,
      {} as never,
    );
    const process = processor.process.bind(processor);
    processor.process = (job, attempt) =>
      process(job, attempt).then(
        (result) => (outcome?.(result), result),
        (error: unknown) => (outcome?.(error), Promise.reject(error)),
      );

    const options = resolveClientOptions({
      redis: redis.url,
      queue: { name: 'mark-test', attempts: 1, commandTimeoutMs: 2000 },
    }).queue;
    queue = new BullCallQueue(options, processor);
    queue.start();
    await queue.submit({
      server: 'remote',
      method: 'tools/call',
      params: { name: 'charge_card', arguments: {} },
      scopeKey: '',
      timeoutMs: 5000,
    });

    const error = await settled;
    // From the kill, within the queue's command deadline (2 s) times three plus 2 s.
    expect(Date.now() - killedAt).toBeLessThanOrEqual(2_000 * 3 + 2_000);
    expect(error).toBeInstanceOf(McpQueueUnavailableError);
    expect(error).toMatchObject({ operation: 'at-most-once mark', delivered: false });
    expect(sent).toEqual([]);
  });
});
