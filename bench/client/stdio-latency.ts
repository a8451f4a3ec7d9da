import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioTransport } from '../../src/mcp/client/transports/stdio/stdio.transport';
import { type McpTransport } from '../../src/mcp/transports';
import { percentiles, timeSequential, WARMUP_CALLS, type Percentiles } from './stats';

/** Argv of the reference server every stdio measurement uses. */
export function everythingArgv(): string[] {
  return [process.execPath, require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'];
}

/** Latency of one `tools/call echo` per stdio lifecycle. */
export interface StdioLatency {
  spawnPerCall: Percentiles;
  pooled: Percentiles;
  sdkConnected: Percentiles;
}

/** One `tools/call echo` through a transport; rejects unless it succeeded. */
export function echoCall(transport: McpTransport, i: number): Promise<unknown> {
  return transport
    .deliver(
      { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { message: `m${i}` } } },
      { sessionId: null, context: { server: 'everything', scopeKey: '', timeoutMs: 30_000 } },
    )
    .then((result) => {
      if (!result.body || !('result' in result.body)) throw new Error(`echo failed: ${result.rawResponse}`);
    });
}

/** Measures spawn-per-call, the warm pool and the official SDK client kept connected. */
export async function measureStdio(spawnCalls: number, warmCalls: number): Promise<StdioLatency> {
  const argv = everythingArgv();
  const spawning = new StdioTransport({ command: argv });
  const pooled = new StdioTransport({ command: argv, stateless: true, pool: { max: 1, idleMs: 60_000 } });
  const sdk = new Client({ name: 'bench', version: '1.0.0' });
  try {
    await echoCall(spawning, -1);
    const spawnPerCall = percentiles(await timeSequential(spawnCalls, (i) => echoCall(spawning, i)));

    await timeSequential(WARMUP_CALLS, (i) => echoCall(pooled, i));
    const pooledStats = percentiles(await timeSequential(warmCalls, (i) => echoCall(pooled, i)));

    await sdk.connect(new StdioClientTransport({ command: argv[0], args: argv.slice(1), stderr: 'ignore' }));
    await timeSequential(WARMUP_CALLS, (i) => sdk.callTool({ name: 'echo', arguments: { message: `w${i}` } }));
    const sdkConnected = percentiles(
      await timeSequential(warmCalls, (i) => sdk.callTool({ name: 'echo', arguments: { message: `m${i}` } })),
    );
    return { spawnPerCall, pooled: pooledStats, sdkConnected };
  } finally {
    await Promise.allSettled([spawning.close(), pooled.close(), sdk.close()]);
  }
}
