import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import {
  McpClientModule,
  McpClientService,
  type McpCallLogMessage,
  type McpCallProgress,
  type McpClientOptions,
} from '../../src/mcp';
import { McpCallAbortedError, McpConfigurationError, McpRpcError } from '../../src/mcp/errors';
import { McpCallQueueHost } from '../../src/mcp/client/queue/mcp-call-queue-host';
import type { BullCallQueue } from '../../src/mcp/client/queue/bull-call-queue';
import { killAllWorkers, startWorker, type WorkerProcess } from '../fixtures/client/worker-process';
import {
  startProgressHttpServer,
  type ProgressHttpServer,
  type ToolEvent,
} from '../fixtures/progress/progress-http-server';
import { startApp, type RunningApp } from '../support/http-app';
import { pollUntil } from '../support/polling';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { deleteRedisKeys, TEST_REDIS_URL } from '../support/redis';

jest.setTimeout(120_000);

const STDIO_SERVER = join(__dirname, '..', 'fixtures', 'progress', 'progress-stdio-server.js');

/** What the callbacks of one call saw, in one list, in the order they were called. */
function recorder() {
  const seen: Array<{ progress: McpCallProgress } | { log: McpCallLogMessage }> = [];
  return {
    seen,
    onProgress: (progress: McpCallProgress) => seen.push({ progress }),
    onLog: (log: McpCallLogMessage) => seen.push({ log }),
  };
}

/** Exactly what the `report` tool sends for `tag`, in its order. */
function reported(tag: string) {
  return [
    { progress: { progress: 1, total: 3, message: `${tag} one` } },
    { log: { level: 'info', logger: 'report', data: `${tag} first` } },
    { progress: { progress: 2, total: 3, message: `${tag} two` } },
    { log: { level: 'warning', logger: 'report', data: { tag, n: 2 } } },
    { progress: { progress: 3, total: 3, message: `${tag} three` } },
  ];
}

describe('per-call onProgress, onLog and AbortSignal against official SDK 1.x servers', () => {
  const prefix = `mcp-progress-${randomBytes(4).toString('hex')}`;
  const queueName = `calls-${randomBytes(4).toString('hex')}`;
  const eventsFile = join(tmpdir(), `progress-events-${randomBytes(4).toString('hex')}.jsonl`);
  let db: TestDatabase;
  let sdk: ProgressHttpServer;
  let redis: Redis;
  let worker: WorkerProcess;
  let caller: RunningApp;
  let inline: RunningApp;
  let bullClient: McpClientService;
  let inlineClient: McpClientService;

  /** What the stdio server processes recorded, in order. */
  const stdioEvents = (): ToolEvent[] => {
    try {
      return readFileSync(eventsFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as ToolEvent);
    } catch {
      return [];
    }
  };
  const eventChannels = async () =>
    ((await redis.pubsub('CHANNELS', `${prefix}:${queueName}:mcp-call-events:*`)) as string[]).length;
  const outboundRows = (method: string) =>
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire JSON read by the assertions
    db.dataSource.query<Array<{ server: string; kind: string; request: Record<string, any>; note: string | null }>>(
      `SELECT server, kind, request, note FROM mcp_events WHERE direction = 'outbound' AND method = $1 ORDER BY created_at`,
      [method],
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    sdk = await startProgressHttpServer();
    redis = new Redis(TEST_REDIS_URL);
    const servers: McpClientOptions['servers'] = {
      http: { url: sdk.url, version: '2025-11-25' },
      stdio: {
        command: process.execPath,
        args: [STDIO_SERVER],
        env: { PROGRESS_EVENTS_FILE: eventsFile },
        version: '2025-11-25',
      },
    };
    // One job at a time on the worker: a call queued behind a running one is still waiting.
    const queue = { name: queueName, prefix, concurrency: 1, attempts: 3, backoffMs: 10 };
    worker = await startWorker({ databaseUrl: db.url, client: { servers, redis: TEST_REDIS_URL, queue } });
    caller = await startApp(db.url, {
      imports: [McpClientModule.forRoot({ servers, redis: TEST_REDIS_URL, queue: { ...queue, worker: false } })],
    });
    bullClient = caller.app.get(McpClientService);
    inline = await startApp(db.url, { imports: [McpClientModule.forRoot({ servers })] });
    inlineClient = inline.app.get(McpClientService);
  });

  afterAll(async () => {
    await worker?.stop().catch(() => undefined);
    await killAllWorkers();
    await caller?.close().catch(() => undefined);
    await inline?.close().catch(() => undefined);
    await sdk?.close();
    redis?.disconnect();
    await deleteRedisKeys(`${prefix}:*`);
    await db?.drop();
    rmSync(eventsFile, { force: true });
  });

  describe.each([
    ['bull, worker in another process', () => bullClient],
    ['inline', () => inlineClient],
  ])('%s', (mode, client) => {
    it.each(['http', 'stdio'])(
      'delivers exactly the progress and log messages of a call over %s, in order',
      async (server) => {
        const tag = `${mode.split(',')[0]}-${server}`;
        const watch = recorder();
        let channelsDuringCall = -1;
        // On the queue, the tool waits after its first progress until this file exists: the
        // caller counts the call's Redis channels while the call provably runs, then releases it.
        const hold = mode.startsWith('bull')
          ? join(tmpdir(), `progress-hold-${randomBytes(4).toString('hex')}`)
          : undefined;
        const result = await client().callTool(server, 'report', hold ? { tag, holdUntil: hold } : { tag }, {
          onProgress: (progress) => {
            watch.onProgress(progress);
            if (progress.progress === 1 && hold)
              void eventChannels()
                .then((n) => (channelsDuringCall = n))
                .finally(() => writeFileSync(hold, ''));
          },
          onLog: watch.onLog,
        });
        if (hold) rmSync(hold, { force: true });
        expect(result.content).toEqual([{ type: 'text', text: `reported ${tag}` }]);
        expect(watch.seen).toEqual(reported(tag));
        expect(await eventChannels()).toBe(0);
        if (mode.startsWith('bull')) {
          await pollUntil('the channel count read during the call', () => (channelsDuringCall >= 0 ? true : undefined));
          expect(channelsDuringCall).toBe(1);
          expect((caller.app.get(McpCallQueueHost).queue as BullCallQueue).subscriptions).toBe(0);
        }
      },
    );
  });

  it('never delivers the progress or logs of one call to another running at the same time', async () => {
    const a = recorder();
    const b = recorder();
    const onlyProgress = recorder();
    const d = recorder();
    // a and b run one after the other on the worker (concurrency 1); c and d at once inline,
    // in the same remote session as the worker's calls.
    await Promise.all([
      inlineClient.callTool('http', 'report', { tag: 'd' }, { onProgress: d.onProgress, onLog: d.onLog }),
      bullClient.callTool('http', 'report', { tag: 'a' }, { onProgress: a.onProgress, onLog: a.onLog }),
      bullClient.callTool('http', 'report', { tag: 'b' }, { onProgress: b.onProgress, onLog: b.onLog }),
      inlineClient.callTool('http', 'report', { tag: 'c' }, { onProgress: onlyProgress.onProgress }),
    ]);
    expect(a.seen).toEqual(reported('a'));
    expect(b.seen).toEqual(reported('b'));
    expect(onlyProgress.seen).toEqual(reported('c').filter((event) => 'progress' in event));
    expect(d.seen).toEqual(reported('d'));
  });

  it('hands each progress and log message to the caller once when its PUBLISH reaches Redis twice (ioredis sends an unanswered command again)', async () => {
    // Every message the worker publishes on a call's events channel is published once more, as
    // the copy ioredis sends on its next connection when the reply to the first was lost.
    const copier = new Redis(TEST_REDIS_URL);
    const copies = new Set<string>();
    let copied = 0;
    copier.on('pmessage', (_pattern: string, channel: string, message: string) => {
      if (copies.delete(message)) return;
      copies.add(message);
      copied++;
      void redis.publish(channel, message);
    });
    await copier.psubscribe(`${prefix}:${queueName}:mcp-call-events:*`);
    try {
      const watch = recorder();
      await bullClient.callTool(
        'http',
        'report',
        { tag: 'twice' },
        { onProgress: watch.onProgress, onLog: watch.onLog },
      );
      expect(watch.seen).toEqual(reported('twice'));
      // Every message was sent twice (the last copies may reach Redis after the call ended).
      await pollUntil('every copy to be published', () => (copies.size === 0 ? true : undefined));
      expect(copied).toBe(reported('twice').length);
    } finally {
      copier.disconnect();
    }
  });

  it('refuses the callbacks and the signal with wait: false', async () => {
    await expect(
      bullClient.callTool('http', 'report', { tag: 'x' }, { wait: false, onProgress: () => undefined }),
    ).rejects.toBeInstanceOf(McpConfigurationError);
    await expect(
      bullClient.callTool('http', 'report', { tag: 'x' }, { wait: false, signal: new AbortController().signal }),
    ).rejects.toBeInstanceOf(McpConfigurationError);
    const onServerRequest = async () => ({});
    await expect(
      inlineClient.callTool('http', 'report', { tag: 'x' }, { wait: false, onServerRequest }),
    ).rejects.toBeInstanceOf(McpConfigurationError);
  });

  it("relays the server's requests from the worker in another process to the caller's onServerRequest, and its errors with their codes", async () => {
    const asked: Array<{ method: string; params: Record<string, unknown> }> = [];
    const answered = await bullClient.callTool(
      'stdio',
      'ask',
      {},
      {
        onServerRequest: async (request) => {
          asked.push(request);
          return { action: 'accept', content: { name: 'Ada' } };
        },
      },
    );
    expect(answered).toMatchObject({ content: [{ type: 'text', text: 'accept:Ada' }] });
    expect(asked).toEqual([expect.objectContaining({ method: 'elicitation/create' })]);
    expect(asked[0].params).toMatchObject({ message: 'Your name?' });
    const refused = await bullClient.callTool(
      'stdio',
      'ask',
      {},
      {
        onServerRequest: async () => {
          throw new McpRpcError(-32602, 'no such form here');
        },
      },
    );
    expect(refused).toMatchObject({
      isError: true,
      content: [{ text: expect.stringMatching(/-32602.*no such form here/) }],
    });
    // Nothing stays subscribed or marked once the calls are over.
    expect((await redis.pubsub('CHANNELS', `${prefix}:${queueName}:mcp-call-requests:*`)) as string[]).toEqual([]);
    expect(await redis.keys(`${prefix}:${queueName}:mcp-answerer:*`)).toEqual([]);
  });

  it('aborts a running call over HTTP through the worker: the SDK server gets notifications/cancelled for its request and its signal fires', async () => {
    const controller = new AbortController();
    const before = sdk.events.length;
    const call = bullClient
      .callTool('http', 'hang', {}, { signal: controller.signal })
      .catch((error: unknown) => error);
    const started = await pollUntil('the hang tool to start', () =>
      sdk.events.slice(before).find((e) => e.tool === 'hang' && e.phase === 'started'),
    );
    controller.abort('the user gave up');
    const error = await call;
    expect(error).toBeInstanceOf(McpCallAbortedError);
    expect(error).toMatchObject({ delivered: true, server: 'http', method: 'tools/call', reason: 'the user gave up' });
    const aborted = await pollUntil('the hang tool to see its abort', () =>
      sdk.events.slice(before).find((e) => e.tool === 'hang' && e.phase === 'aborted'),
    );
    expect(aborted.requestId).toBe(started.requestId);
    const cancels = sdk.posted.filter((body) => body.method === 'notifications/cancelled');
    expect(cancels.at(-1)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: started.requestId, reason: 'the user gave up' },
    });
    // Audit: the call's row says it was aborted; the notice has a row of its own.
    const calls = (await outboundRows('tools/call')).filter((row) => row.request.id === started.requestId);
    expect(calls).toHaveLength(1);
    expect(calls[0].note).toMatch(/^McpCallAbortedError: /);
    const notices = (await outboundRows('notifications/cancelled')).filter(
      (row) => row.request.params.requestId === started.requestId,
    );
    expect(notices.map((row) => [row.server, row.kind])).toEqual([['http', 'notification']]);
    // Not retried: the tool ran once.
    expect(sdk.events.slice(before).filter((e) => e.tool === 'hang' && e.phase === 'started')).toHaveLength(1);
    expect(await eventChannels()).toBe(0);
  });

  it.each([
    ['bull', () => bullClient],
    ['inline', () => inlineClient],
  ])(
    'aborts a running call over stdio (%s): the SDK server process sees notifications/cancelled for its request',
    async (_mode, client) => {
      const controller = new AbortController();
      const before = stdioEvents().length;
      const call = client()
        .callTool('stdio', 'hang', {}, { signal: controller.signal })
        .catch((error: unknown) => error);
      const started = await pollUntil('the stdio hang tool to start', () =>
        stdioEvents()
          .slice(before)
          .find((e) => e.tool === 'hang' && e.phase === 'started'),
      );
      controller.abort();
      const error = await call;
      expect(error).toBeInstanceOf(McpCallAbortedError);
      expect(error).toMatchObject({ delivered: true, server: 'stdio', method: 'tools/call' });
      const aborted = await pollUntil('the stdio hang tool to see its abort', () =>
        stdioEvents()
          .slice(before)
          .find((e) => e.tool === 'hang' && e.phase === 'aborted'),
      );
      expect(aborted).toEqual({
        tool: 'hang',
        phase: 'aborted',
        requestId: started.requestId,
        reason: 'The client aborted the request',
      });
      const notices = (await outboundRows('notifications/cancelled')).filter(
        (row) => row.request.params.requestId === started.requestId,
      );
      expect(notices).toHaveLength(1);
    },
  );

  it('drops a call aborted while queued behind another: the server never sees it', async () => {
    const running = new AbortController();
    const queued = new AbortController();
    const before = sdk.events.length;
    const first = bullClient.callTool('http', 'hang', {}, { signal: running.signal }).catch((error: unknown) => error);
    await pollUntil('the hang tool to start', () =>
      sdk.events.slice(before).find((e) => e.tool === 'hang' && e.phase === 'started'),
    );
    const second = bullClient.callTool('http', 'never', {}, { signal: queued.signal }).catch((error: unknown) => error);
    const bull = (caller.app.get(McpCallQueueHost).queue as BullCallQueue).bull;
    await pollUntil('the second call to wait in the queue', async () =>
      (await bull.getWaitingCount()) === 1 ? true : undefined,
    );
    queued.abort();
    const error = await second;
    expect(error).toBeInstanceOf(McpCallAbortedError);
    expect(error).toMatchObject({ delivered: false, method: 'tools/call' });
    expect(await bull.getWaitingCount()).toBe(0);
    running.abort();
    expect(await first).toMatchObject({ name: 'McpCallAbortedError', delivered: true });
    // The worker is free again and runs later calls; the aborted one never reached the server.
    expect(await bullClient.callTool('http', 'report', { tag: 'after' })).toEqual({
      content: [{ type: 'text', text: 'reported after' }],
    });
    expect(sdk.events.filter((e) => e.tool === 'never')).toEqual([]);
    expect(
      sdk.posted.filter((body) => body.method === 'tools/call' && (body.params as { name: string }).name === 'never'),
    ).toHaveLength(0);
  });

  it('rejects at once, without a job, a call whose signal was aborted before it was made', async () => {
    const bull = (caller.app.get(McpCallQueueHost).queue as BullCallQueue).bull;
    const jobs = await bull.getJobCounts();
    const error = await bullClient
      .callTool('http', 'never', {}, { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpCallAbortedError);
    expect(error).toMatchObject({ delivered: false });
    expect(await bull.getJobCounts()).toEqual(jobs);
    const inlineError = await inlineClient
      .callTool('http', 'never', {}, { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(inlineError).toMatchObject({ name: 'McpCallAbortedError', delivered: false });
    expect(sdk.events.filter((e) => e.tool === 'never')).toEqual([]);
  });
});
