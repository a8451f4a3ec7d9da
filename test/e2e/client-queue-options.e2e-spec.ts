import { randomBytes } from 'node:crypto';
import { McpClientModule, McpClientService, McpModule } from '../../src/mcp';
import { McpCallNotFoundError } from '../../src/mcp/errors';
import type { BullCallQueue } from '../../src/mcp/client/queue/bull-call-queue';
import { McpCallQueueHost } from '../../src/mcp/client/queue/mcp-call-queue-host';
import { GatedTools } from '../fixtures/documented/documented-tools';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { TEST_REDIS_URL as REDIS_URL } from '../support/redis';

jest.setTimeout(60_000);

const KEEP_RESULTS_MS = 1000;

/** Boots an app that serves GatedTools and FixtureTools and calls them through the given queue settings. */
function bootQueueApp(
  db: TestDatabase,
  redis: string | undefined,
  queue: Record<string, unknown>,
): Promise<RunningApp> {
  return startApp(db.url, {
    imports: [
      McpModule.forRoot({ auth: fixtureAuth, providers: [GatedTools, FixtureTools] }),
      McpClientModule.forRoot({ servers: { local: { transport: 'toolset', principal: 'queue-test' } }, redis, queue }),
    ],
    providers: [GatedTools, FixtureTools],
  });
}

/** Releases the gated calls one at a time until every call id has completed. */
async function drain(gated: GatedTools, client: McpClientService, ids: string[]): Promise<unknown[]> {
  const outcomes = Promise.all(ids.map((id) => client.waitForCall(id)));
  let done = false;
  void outcomes.finally(() => (done = true)).catch(() => undefined);
  while (!done) {
    await pollUntil('a blocked call or the end', () => (gated.running > 0 || done ? true : undefined));
    gated.releaseOne();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return outcomes;
}

/** `queue.concurrency` and `queue.keepResultsMs`, observed through a tool's own counters and the outcome store. */
describe('McpClientModule queue options', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  describe('Bull (real Redis)', () => {
    const name = `mcp-doc-${randomBytes(4).toString('hex')}`;
    const prefix = 'mcp-doc-e2e';
    let app: RunningApp;
    let client: McpClientService;
    let gated: GatedTools;
    let bull: BullCallQueue['bull'];

    beforeAll(async () => {
      app = await bootQueueApp(db, REDIS_URL, { name, prefix, concurrency: 2, keepResultsMs: KEEP_RESULTS_MS });
      client = app.app.get(McpClientService);
      gated = app.app.get(GatedTools);
      bull = (app.app.get(McpCallQueueHost, { strict: false }).queue as BullCallQueue).bull;
    });

    afterAll(async () => {
      gated?.releaseAll();
      if (bull) {
        await bull.obliterate({ force: true }).catch(() => undefined);
        const keys = await bull.client.keys(`${prefix}:${name}:*`);
        if (keys.length) await bull.client.del(...keys);
      }
      await app?.close();
    });

    it('concurrency 2: of 4 blocking calls exactly 2 run at once while 2 wait in the queue', async () => {
      expect(client.mode).toBe('bull');
      gated.maxRunning = 0;
      const ids = await Promise.all([1, 2, 3, 4].map(() => client.callTool('local', 'gated', {}, { wait: false })));
      await pollUntil('two calls running', () => (gated.running === 2 ? true : undefined));
      await pollUntil('two jobs waiting', async () => ((await bull.getWaitingCount()) === 2 ? true : undefined));
      expect(await bull.getActiveCount()).toBe(2);
      expect(gated.running).toBe(2);
      const outcomes = await drain(gated, client, ids);
      expect(outcomes).toEqual(ids.map(() => ({ content: [{ type: 'text', text: 'released' }] })));
      expect(gated.maxRunning).toBe(2);
    });

    // Bull applies `removeOnComplete: { age }` only when a later job of the queue finishes; the
    // client checks the age itself, so an idle queue forgets outcomes on time too.
    it('keepResultsMs: an outcome is fetchable by id before it expires, and McpCallNotFoundError after', async () => {
      const id = await client.callTool('local', 'echo', { text: 'kept' }, { wait: false });
      expect(await client.waitForCall(id)).toEqual({ content: [{ type: 'text', text: 'kept' }] });
      expect(await client.getCallResult(id)).toEqual({
        id,
        state: 'completed',
        result: { content: [{ type: 'text', text: 'kept' }] },
      });
      const gone = await pollUntil<unknown>(
        'the outcome to expire',
        async () => {
          try {
            await client.getCallResult(id);
            return undefined;
          } catch (error) {
            return error;
          }
        },
        15_000,
        200,
      );
      expect(gone).toBeInstanceOf(McpCallNotFoundError);
      expect(gone).toMatchObject({ callId: id });
    });

    it('keepResultsMs: an expired outcome is gone (McpCallNotFoundError) once a later call of the queue has finished', async () => {
      const id = await client.callTool('local', 'echo', { text: 'kept until the next call' }, { wait: false });
      await client.waitForCall(id);
      expect((await client.getCallResult(id)).state).toBe('completed');
      const completedFrom = Date.now();
      await pollUntil('the outcome to be older than keepResultsMs', () =>
        Date.now() - completedFrom > KEEP_RESULTS_MS + 1100 ? true : undefined,
      );
      expect(await client.callTool('local', 'echo', { text: 'a later call' })).toEqual({
        content: [{ type: 'text', text: 'a later call' }],
      });
      await expect(client.getCallResult(id)).rejects.toBeInstanceOf(McpCallNotFoundError);
      await expect(client.waitForCall(id)).rejects.toMatchObject({ callId: id });
    });
  });

  describe('inline', () => {
    let app: RunningApp;
    let client: McpClientService;
    let gated: GatedTools;

    beforeAll(async () => {
      app = await bootQueueApp(db, undefined, { concurrency: 2, keepResultsMs: KEEP_RESULTS_MS });
      client = app.app.get(McpClientService);
      gated = app.app.get(GatedTools);
    });

    afterAll(async () => {
      gated?.releaseAll();
      await app?.close();
    });

    it('concurrency 2: of 4 blocking calls exactly 2 run at once', async () => {
      expect(client.mode).toBe('inline');
      gated.maxRunning = 0;
      const ids = await Promise.all([1, 2, 3, 4].map(() => client.callTool('local', 'gated', {}, { wait: false })));
      await pollUntil('two calls running', () => (gated.running >= 2 ? true : undefined));
      // A settling window for any call over the limit to start; the assertion is on the counter.
      const settleFrom = Date.now();
      await pollUntil('the queue to settle', () =>
        gated.started === 4 || Date.now() - settleFrom > 1000 ? true : undefined,
      );
      expect(gated.started).toBe(2);
      await drain(gated, client, ids);
      expect(gated.maxRunning).toBe(2);
    });

    it('keepResultsMs: an outcome is McpCallNotFoundError after it expires', async () => {
      const id = await client.callTool('local', 'echo', { text: 'kept inline' }, { wait: false });
      expect(await client.waitForCall(id)).toEqual({ content: [{ type: 'text', text: 'kept inline' }] });
      expect((await client.getCallResult(id)).state).toBe('completed');
      const expiresFrom = Date.now();
      await pollUntil('the outcome to expire', () =>
        Date.now() - expiresFrom > KEEP_RESULTS_MS + 500 ? true : undefined,
      );
      await expect(client.getCallResult(id)).rejects.toBeInstanceOf(McpCallNotFoundError);
    });
  });
});
