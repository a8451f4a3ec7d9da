import { randomBytes } from 'node:crypto';
import { McpClientModule, McpModule, type McpClientOptions, McpClientService } from '../../src/mcp';
import { McpCallQueueHost } from '../../src/mcp/client/queue/mcp-call-queue-host';
import type { BullCallQueue } from '../../src/mcp/client/queue/bull-call-queue';
import { ClientFixtureTools } from '../../test/fixtures/client/client-tools';
import { startWorker, type WorkerProcess } from '../../test/fixtures/client/worker-process';
import { fixtureAuth } from '../../test/fixtures/fixture-tools';
import { startApp, type RunningApp } from '../../test/support/http-app';
import { percentiles, timeSequential, type Percentiles } from './stats';

/** Inline vs Bull latency, and Bull throughput with one and two worker processes. */
export interface QueueResults {
  inline: Percentiles;
  bull: Percentiles;
  oneWorker: number;
  twoWorkers: number;
}

/** Settings of the queue measurement. */
export interface QueueBenchOptions {
  databaseUrl: string;
  redis: string;
  /** Duration of the slow tool, in ms. */
  toolMs: number;
  latencyCalls: number;
  throughputCalls: number;
  /** Jobs each worker runs at once. */
  concurrency: number;
}

const SERVERS: McpClientOptions['servers'] = { local: { transport: 'toolset', principal: 'bench' } };

function clientOf(app: RunningApp): McpClientService {
  return app.app.get(McpClientService);
}

async function throughput(client: McpClientService, calls: number, toolMs: number): Promise<number> {
  const start = performance.now();
  await Promise.all(Array.from({ length: calls }, () => client.callTool('local', 'pause', { ms: toolMs })));
  return calls / ((performance.now() - start) / 1000);
}

/** Runs the measurement; every process and queue it starts is closed before it returns. */
export async function measureQueue(options: QueueBenchOptions): Promise<QueueResults> {
  const slow = (client: McpClientService) => () => client.callTool('local', 'pause', { ms: options.toolMs });
  const inlineApp = await startApp(options.databaseUrl, {
    imports: [McpModule.forRoot({ auth: fixtureAuth }), McpClientModule.forRoot({ servers: SERVERS })],
    providers: [ClientFixtureTools],
  });
  let inline: Percentiles;
  try {
    await timeSequential(20, slow(clientOf(inlineApp)));
    inline = percentiles(await timeSequential(options.latencyCalls, slow(clientOf(inlineApp))));
  } finally {
    await inlineApp.close();
  }

  const queue = {
    name: `mcp-bench-${randomBytes(4).toString('hex')}`,
    prefix: 'mcp-bench',
    concurrency: options.concurrency,
  };
  const client: McpClientOptions = { servers: SERVERS, redis: options.redis, queue };
  const caller = await startApp(options.databaseUrl, {
    imports: [McpClientModule.forRoot({ ...client, queue: { ...queue, worker: false } })],
  });
  const workers: WorkerProcess[] = [];
  try {
    workers.push(await startWorker({ databaseUrl: options.databaseUrl, client }));
    await timeSequential(20, slow(clientOf(caller)));
    const bull = percentiles(await timeSequential(options.latencyCalls, slow(clientOf(caller))));
    await throughput(clientOf(caller), options.concurrency * 4, options.toolMs);
    const oneWorker = await throughput(clientOf(caller), options.throughputCalls, options.toolMs);
    workers.push(await startWorker({ databaseUrl: options.databaseUrl, client }));
    await throughput(clientOf(caller), options.concurrency * 8, options.toolMs);
    const twoWorkers = await throughput(clientOf(caller), options.throughputCalls, options.toolMs);
    return { inline, bull, oneWorker, twoWorkers };
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    const bullQueue = (caller.app.get(McpCallQueueHost, { strict: false }).queue as BullCallQueue).bull;
    await bullQueue.obliterate({ force: true }).catch(() => undefined);
    const marks = await bullQueue.client.keys(`${queue.prefix}:${queue.name}:*`);
    if (marks.length) await bullQueue.client.del(...marks);
    await caller.close();
  }
}
