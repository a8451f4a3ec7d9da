/**
 * Client benchmark (`npm run bench:client`): stdio tools/call latency per lifecycle against
 * server-everything, the pooled transport alone vs `McpClientService.callTool` with its outbound
 * row in both audit commit modes, and queued (Bull on Redis) vs inline calls of a slow, I/O-bound tool with
 * one and two worker processes. Needs PostgreSQL (TEST_PG_URL) and Redis (TEST_REDIS_URL).
 */
import { createTestDatabase } from '../test/support/postgres';
import { TEST_REDIS_URL } from '../test/support/redis';
import { measureQueue } from './client/queue-throughput';
import { latencyLine, targetLine } from './client/stats';
import { measureService, type CallCost, type ServiceLatency } from './client/service-latency';
import { measureStdio } from './client/stdio-latency';

const REDIS_URL = TEST_REDIS_URL;
const TOOL_MS = 20;

async function main(): Promise<void> {
  const lines: string[] = [];
  const print = (line: string) => {
    lines.push(line);
    console.log(line);
  };

  print('== stdio tools/call (server-everything "echo"), sequential ==');
  const stdio = await measureStdio(
    Number(process.env.BENCH_SPAWN_CALLS ?? 20),
    Number(process.env.BENCH_WARM_CALLS ?? 1000),
  );
  print(latencyLine('StdioTransport spawn-per-call', stdio.spawnPerCall));
  print(latencyLine('StdioTransport pooled (max 1, warm)', stdio.pooled));
  print(latencyLine('official SDK 1.x client, kept connected', stdio.sdkConnected));

  const db = await createTestDatabase();
  let queue;
  let service: ServiceLatency;
  try {
    print(
      '== pooled stdio tools/call: the bare transport vs McpClientService.callTool with its outbound row (inline queue, PostgreSQL) ==',
    );
    service = await measureService(db.url, Number(process.env.BENCH_SERVICE_CALLS ?? 1000));
    const withCpu = (label: string, cost: CallCost) =>
      `${latencyLine(label, cost)}   node CPU ${cost.cpuUs.toFixed(0)} µs/call`;
    print(withCpu('(a) StdioTransport pooled (max 1, warm)', service.transport));
    print(withCpu("(b) callTool, audit.commit 'sync'", service.service));
    print(withCpu("(c) callTool, audit.commit 'async'", service.serviceAsync));
    print(withCpu("(d) the outbound row alone, 'async'", service.rowAsync));
    print(withCpu('(e) callTool, in-memory stores (no database)', service.serviceInMemory));
    print(withCpu("(f) floor of (b): (a), then a raw 'sync' INSERT", service.floorSync));
    const ratio = (cost: CallCost) => `${(cost.p50 / service.transport.p50).toFixed(2)}x`;
    print(
      `${'(b), (c), (e) / (a) at p50'.padEnd(44)} ${ratio(service.service)}, ${ratio(service.serviceAsync)}, ${ratio(service.serviceInMemory)}`,
    );
    print(`== queued vs inline tools/call of a ${TOOL_MS} ms I/O-bound tool (toolset in the worker) ==`);
    queue = await measureQueue({
      databaseUrl: db.url,
      redis: REDIS_URL,
      toolMs: TOOL_MS,
      latencyCalls: 200,
      throughputCalls: 800,
      concurrency: 4,
    });
  } finally {
    await db.drop();
  }
  print(latencyLine('inline (same process)', queue.inline));
  print(latencyLine('Bull on Redis, 1 worker process', queue.bull));
  print(`${'Bull throughput, 1 worker (concurrency 4)'.padEnd(44)} ${queue.oneWorker.toFixed(1)} calls/s`);
  print(`${'Bull throughput, 2 workers (concurrency 4)'.padEnd(44)} ${queue.twoWorkers.toFixed(1)} calls/s`);

  print('== targets ==');
  const speedup = stdio.spawnPerCall.p50 / stdio.pooled.p50;
  print(targetLine(stdio.pooled.p50 <= 2, `pooled stdio p50 ${stdio.pooled.p50.toFixed(3)} ms <= 2 ms`));
  print(
    targetLine(
      service.serviceAsync.p50 <= 0.8,
      `pooled stdio callTool with its outbound row ('async') p50 ${service.serviceAsync.p50.toFixed(3)} ms <= 0.8 ms`,
    ),
  );
  print(
    targetLine(
      service.service.p50 <= 1,
      `pooled stdio callTool with its outbound row ('sync') p50 ${service.service.p50.toFixed(3)} ms <= 1 ms (its floor (f): ${service.floorSync.p50.toFixed(3)} ms)`,
    ),
  );
  print(targetLine(speedup >= 50, `pooled stdio ${speedup.toFixed(0)}x faster than spawn-per-call (>= 50x)`));
  const added = queue.bull.p50 - queue.inline.p50;
  print(targetLine(added <= 5, `Bull adds ${added.toFixed(2)} ms p50 over inline (<= 5 ms)`));
  const scale = queue.twoWorkers / queue.oneWorker;
  print(targetLine(scale >= 1.7, `2 workers give ${scale.toFixed(2)}x the throughput of 1 (>= 1.7x)`));
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
