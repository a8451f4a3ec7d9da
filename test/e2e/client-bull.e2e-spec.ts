import { randomBytes } from 'node:crypto';
import { McpModule, McpClientService, type McpClientOptions } from '../../src/mcp';
import { McpCallInterruptedError } from '../../src/mcp/errors';
import { BlockingTools } from '../fixtures/client/blocking-tools';
import { ClientFixtureTools } from '../fixtures/client/client-tools';
import { killableWorkerQueue, startCallerAndWorker, stopAllWorkers } from '../fixtures/client/bull-worker-setup';
import { startWorker, type WorkerProcess } from '../fixtures/client/worker-process';
import { FixtureTools, fixtureAuth } from '../fixtures/fixture-tools';
import { startApp, type RunningApp } from '../support/http-app';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';

jest.setTimeout(90_000);

/** Polls `check` until it returns true or the deadline passes. */
async function until(check: () => Promise<boolean>, deadlineMs = 30_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met before the deadline');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('McpClientService on Bull (real Redis), jobs run by worker processes', () => {
  const queueName = `mcp-calls-${randomBytes(4).toString('hex')}`;
  const prefix = `mcp-e2e-${randomBytes(4).toString('hex')}`;
  let db: TestDatabase;
  let target: RunningApp;
  let caller: RunningApp;
  let client: McpClientService;
  let clientOptions: McpClientOptions;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    target = await startApp(db.url, {
      imports: [McpModule.forRoot({ auth: fixtureAuth })],
      providers: [FixtureTools, BlockingTools, ClientFixtureTools],
    });
    clientOptions = {
      servers: {
        remote: { url: `${target.baseUrl}/mcp`, bearerToken: 'token-alice' },
        local: { transport: 'toolset', principal: 'worker' },
      },
      redis: TEST_REDIS_URL,
      queue: killableWorkerQueue(queueName, prefix),
    };
    const started = await startCallerAndWorker(db.url, clientOptions);
    ({ caller, client } = started);
    workers.push(started.worker);
  });

  afterAll(async () => {
    await stopAllWorkers(workers);
    await caller?.close().catch(() => undefined);
    await target?.close().catch(() => undefined);
    // Every key of the queue's own prefix: jobs, events and the at-most-once marks.
    await deleteRedisKeys(`${prefix}:*`);
    await db?.drop();
  });

  it('enqueues in this process and gets the result of a worker in another process', async () => {
    expect(client.mode).toBe('bull');
    const result = await client.callTool('local', 'where', { tag: 'cross' });
    expect(result.structuredContent).toEqual({ pid: workers[0].pid, tag: 'cross' });
    expect(workers[0].pid).not.toBe(process.pid);
    const remote = await client.callTool('remote', 'echo', { text: 'over http' });
    expect(remote.content).toEqual([{ type: 'text', text: 'over http' }]);
  });

  it('returns a call id at once with wait: false and fetches the outcome by id', async () => {
    const id = await client.callTool('remote', 'echo', { text: 'later' }, { wait: false });
    expect(typeof id).toBe('string');
    await until(async () => (await client.getCallResult(id)).state === 'completed');
    expect((await client.getCallResult(id)).result).toEqual({ content: [{ type: 'text', text: 'later' }] });
    expect(await client.waitForCall(id)).toEqual({ content: [{ type: 'text', text: 'later' }] });
  });

  it('never sends a tools/call twice when its worker dies mid-call and the job is re-run', async () => {
    const blocking = target.app.get(BlockingTools);
    const before = blocking.calls;
    const id = await client.enqueueToolCall('remote', 'block');
    await blocking.whenCalled(before + 1);
    await workers[0].kill();
    workers.push(await startWorker({ databaseUrl: db.url, client: clientOptions }));
    const second = blocking.whenCalled(before + 2).then(() => {
      blocking.releaseAll();
      throw new Error('a second tools/call reached the server');
    });
    await expect(Promise.race([client.waitForCall(id), second])).rejects.toBeInstanceOf(McpCallInterruptedError);
    const state = await client.getCallResult(id);
    expect(state.state).toBe('failed');
    expect(state.error).toBeInstanceOf(McpCallInterruptedError);
    expect(blocking.calls).toBe(before + 1);
    // The one call that reached the server ends (cancelled when its worker's connection closed)
    // and leaves its one row; no second row ever comes.
    const rows = async () =>
      (
        await db.dataSource.query(
          `SELECT count(*)::int AS n FROM mcp_events WHERE direction = 'inbound' AND method = 'tools/call' AND request->'params'->>'name' = 'block'`,
        )
      )[0].n as number;
    blocking.releaseAll();
    await until(async () => (await rows()) === 1);
    await new Promise(setImmediate);
    expect(await rows()).toBe(1);
    expect(blocking.calls).toBe(before + 1);
    // The new worker serves other calls normally.
    const after = await client.callTool('local', 'where', { tag: 'after' });
    expect(after.structuredContent).toEqual({ pid: workers[1].pid, tag: 'after' });
  });
});
