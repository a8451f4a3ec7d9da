import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import type { JsonRpcRequest } from '../../src/mcp/protocol/jsonrpc';
import { mcpClientStores, MCP_EVENT_SINK, type McpEventSink } from '../../src/mcp/stores';
import { McpClientModule, McpClientService } from '../../src/mcp';
import { startApp } from '../../test/support/http-app';
import { percentiles, timeSequential, WARMUP_CALLS, type Percentiles } from './stats';

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
  /**
   * The floor of (b) without the library: the bare pooled transport, then the exchange's row by one
   * INSERT straight through `pg` with a synchronous commit. No service call can take less.
   */
  floorSync: CallCost;
}

/**
 * Times the floor of a call with its row committed synchronously: `echoCall` through a bare
 * pooled transport, then one prepared INSERT of the exchange's `mcp_events` row from a plain `pg`
 * client (its own connection, autocommit), the envelopes as JSON text.
 */
async function measureFloor(databaseUrl: string, argv: string[], calls: number): Promise<CallCost> {
  const db = new PgClient({ connectionString: databaseUrl });
  await db.connect();
  const transport = new StdioTransport({ command: argv, stateless: true, pool: { max: 1, idleMs: 60_000 } });
  const statement = {
    name: 'floor_row',
    text:
      'INSERT INTO mcp_events (id, created_at, direction, server, kind, method, request, response, status, duration_ms) ' +
      "SELECT $1::varchar, $2::timestamp, 'outbound', 'everything', 'request', 'tools/call', $3::jsonb, $4::jsonb, NULL, $5::integer",
  };
  const call = async (i: number) => {
    const startedAt = new Date();
    const message = {
      jsonrpc: '2.0',
      id: randomUUID(),
      method: 'tools/call',
      params: { name: 'echo', arguments: { message: `m${i}` } },
    };
    const result = await transport.deliver(message as JsonRpcRequest, {
      sessionId: null,
      context: { server: 'everything', scopeKey: '', timeoutMs: 30_000 },
    });
    if (!result.body || !('result' in result.body)) throw new Error(`echo failed: ${result.rawResponse}`);
    const durationMs = Math.round(Date.now() - startedAt.getTime());
    await db.query({
      ...statement,
      values: [randomUUID(), startedAt, JSON.stringify(message), JSON.stringify(result.body), durationMs],
    });
  };
  try {
    await timeSequential(WARMUP_CALLS, call);
    return await measureCalls(calls, call);
  } finally {
    await transport.close();
    await db.end();
  }
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
    await timeSequential(WARMUP_CALLS, (i) => echoCall(pooled, i));
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
      await timeSequential(WARMUP_CALLS, call);
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
        await timeSequential(WARMUP_CALLS, row);
        rowAsync = await measureCalls(calls, row);
      }
      return stats;
    } finally {
      await app.close();
    }
  };
  const sync = await service('sync');
  const floorSync = await measureFloor(databaseUrl, argv, calls);
  const serviceAsync = await service('async');
  const serviceInMemory = await service('in-memory');
  return { transport, service: sync, serviceAsync, rowAsync: rowAsync as CallCost, serviceInMemory, floorSync };
}
