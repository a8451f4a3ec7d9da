import { McpClientModule, McpClientService } from '../../src/mcp';
import { startApp } from '../../test/support/http-app';
import { percentiles, timeSequential, type Percentiles } from './stats';
import { echoCall, everythingArgv } from './stdio-latency';
import { StdioTransport } from '../../src/mcp';

/** Latency of a pooled stdio `tools/call echo`: the bare transport, and `McpClientService.callTool` with its outbound row. */
export interface ServiceLatency {
  transport: Percentiles;
  /** `callTool`, outbound rows committed with `audit.commit` 'sync'. */
  service: Percentiles;
  /** `callTool`, outbound rows committed with `audit.commit` 'async'. */
  serviceAsync: Percentiles;
}

/**
 * Measures both in one run, against the same reference server: the transport alone (a pool of
 * one process, warm), then `McpClientService.callTool` (inline queue, the server entry pooled the
 * same way) on PostgreSQL, each call waiting for its `mcp_events` row.
 */
export async function measureService(databaseUrl: string, calls: number): Promise<ServiceLatency> {
  const argv = everythingArgv();
  const pooled = new StdioTransport({ command: argv, stateless: true, pool: { max: 1, idleMs: 60_000 } });
  let transport: Percentiles;
  try {
    await timeSequential(200, (i) => echoCall(pooled, i));
    transport = percentiles(await timeSequential(calls, (i) => echoCall(pooled, i)));
  } finally {
    await pooled.close();
  }
  const service = async (commit: 'sync' | 'async') => {
    const app = await startApp(databaseUrl, {
      imports: [
        McpClientModule.forRoot({
          servers: { everything: { transport: 'stdio', command: argv[0], args: argv.slice(1), stateless: true, pool: { max: 1, idleMs: 60_000 } } },
          audit: { commit },
        }),
      ],
    });
    try {
      const client = app.app.get(McpClientService);
      const call = (i: number) => client.callTool('everything', 'echo', { message: `m${i}` });
      await timeSequential(200, call);
      return percentiles(await timeSequential(calls, call));
    } finally {
      await app.close();
    }
  };
  return { transport, service: await service('sync'), serviceAsync: await service('async') };
}
