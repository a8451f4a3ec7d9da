import { mcpClientStores, MCP_EVENT_SINK, type McpEventSink } from '../../src/mcp/stores';
import { McpClientModule, McpClientService } from '../../src/mcp';
import { startApp } from '../../test/support/http-app';
import { percentiles, timeSequential, type Percentiles } from './stats';

/** Latency percentiles plus the CPU this process spent per call (user + system), in µs. */
export type CallCost = Percentiles & { cpuUs: number };

/** Times `count` sequential calls and the CPU they cost this process. */
async function measureCalls(count: number, fn: (i: number) => Promise<unknown>): Promise<CallCost> {
  const before = process.cpuUsage();
  const stats = percentiles(await timeSequential(count, fn));
  const used = process.cpuUsage(before);
  return { ...stats, cpuUs: (used.user + used.system) / count };
}
import { echoCall, everythingArgv } from './stdio-latency';
import { StdioTransport } from '../../src/mcp/client/transports/stdio/stdio.transport';
import { InMemoryMcpEventSink, InMemoryMcpOutboundSessionStore } from '../../src/mcp/testing';

/** Latency of a pooled stdio `tools/call echo`: the bare transport, and `McpClientService.callTool` with its outbound row. */
export interface ServiceLatency {
  transport: CallCost;
  /** `callTool`, outbound rows committed with `audit.commit` 'sync'. */
  service: CallCost;
  /** `callTool`, outbound rows committed with `audit.commit` 'async'. */
  serviceAsync: CallCost;
  /** The outbound row alone (`McpEventSink.record`, 'async'): the floor of what a call adds to its transport. */
  rowAsync: CallCost;
  /** `callTool` with the in-memory stores of `durable-mcp/testing`: what the client path costs without a database. */
  serviceInMemory: CallCost;
}

/**
 * Measures both in one run, against the same reference server: the transport alone (a pool of
 * one process, warm), then `McpClientService.callTool` (inline queue, the server entry pooled the
 * same way) on PostgreSQL, each call waiting for its `mcp_events` row, in both commit modes; then
 * the row alone, and `callTool` on in-memory stores (the client path without its database).
 */
export async function measureService(databaseUrl: string, calls: number): Promise<ServiceLatency> {
  const argv = everythingArgv();
  const pooled = new StdioTransport({ command: argv, stateless: true, pool: { max: 1, idleMs: 60_000 } });
  let transport: CallCost;
  try {
    await timeSequential(200, (i) => echoCall(pooled, i));
    transport = await measureCalls(calls, (i) => echoCall(pooled, i));
  } finally {
    await pooled.close();
  }
  let rowAsync: CallCost | undefined;
  const servers = {
    everything: {
      transport: 'stdio' as const,
      command: argv[0],
      args: argv.slice(1),
      stateless: true,
      pool: { max: 1, idleMs: 60_000 },
    },
  };
  const service = async (commit: 'sync' | 'async' | 'in-memory') => {
    const module =
      commit === 'in-memory'
        ? McpClientModule.forRoot({
            servers,
            stores: mcpClientStores({
              events: new InMemoryMcpEventSink(),
              outboundSessions: new InMemoryMcpOutboundSessionStore(),
            }),
          })
        : McpClientModule.forRoot({ servers, advanced: { audit: { commit } } });
    const app = await startApp(databaseUrl, { imports: [module] });
    try {
      const client = app.app.get(McpClientService);
      const call = (i: number) => client.callTool('everything', 'echo', { message: `m${i}` });
      await timeSequential(200, call);
      const stats = await measureCalls(calls, call);
      if (commit === 'async') {
        const sink = app.app.get<McpEventSink>(MCP_EVENT_SINK, { strict: false });
        const row = () =>
          sink.record({
            createdAt: new Date(),
            direction: 'outbound',
            server: 'everything',
            kind: 'request',
            method: 'tools/call',
            durationMs: 0,
          });
        rowAsync = await measureCalls(calls, row);
      }
      return stats;
    } finally {
      await app.close();
    }
  };
  const sync = await service('sync');
  const serviceAsync = await service('async');
  const serviceInMemory = await service('in-memory');
  return { transport, service: sync, serviceAsync, rowAsync: rowAsync as CallCost, serviceInMemory };
}
