/**
 * Soak: drives many requests and sessions through one app on PostgreSQL and prints the resident
 * set size as it goes, to show that per-session and per-request state does not accumulate (the
 * RSS column should level off, not climb with the request count).
 *
 *   npm run bench:soak
 *
 * Environment: SOAK_REQUESTS (default 200000 tools/call), SOAK_SESSIONS (default 20000; each
 * initializes, calls, and ends by DELETE or by being abandoned), SOAK_CONCURRENCY (default 32),
 * SOAK_ABORT_EVERY (default 50: every n-th call is aborted by the client mid-flight),
 * BENCH_PG_URL (the PostgreSQL server a throwaway database is created on). The app and the load
 * run in this process on loopback; run with `node --expose-gc -r ts-node/register/transpile-only`
 * to sample RSS after a full collection. At the end it prints the map sizes of the mount, which
 * must be zero.
 */
import 'reflect-metadata';
import { Injectable, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { MCP_ENTITIES, MCP_MIGRATIONS, McpModule, McpTool, Toolset, type McpToolContext } from '../src/mcp';
import { McpPendingClientRequests } from '../src/mcp/server/http/mcp-session-channel-pending';
import { McpStreamRegistry } from '../src/mcp/server/http/mcp-stream-registry';
import { McpListenStreams } from '../src/mcp/server/stateless/listen-stream-registry';
import { createBenchDatabase } from './server/bench.database';

const REQUESTS = Number(process.env.SOAK_REQUESTS ?? 200_000);
const SESSIONS = Number(process.env.SOAK_SESSIONS ?? 20_000);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 32);
const ABORT_EVERY = Number(process.env.SOAK_ABORT_EVERY ?? 50);
const PG_ADMIN_URL = process.env.BENCH_PG_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test';
const TOKEN = randomBytes(24).toString('base64url');

@Injectable()
class SoakTools {
  @McpTool({ description: 'Echoes text', input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } })
  async echo({ text }: { text: string }, ctx: McpToolContext): Promise<string> {
    await ctx.progress(1, 1);
    return text;
  }
}

function mib(bytes: number): string {
  return (bytes / 1048576).toFixed(1);
}

async function main(): Promise<void> {
  const db = await createBenchDatabase(PG_ADMIN_URL);
  let app: INestApplication | undefined;
  try {
    @Module({
      imports: [
        TypeOrmModule.forRoot({ type: 'postgres', url: db.url, entities: MCP_ENTITIES, migrations: MCP_MIGRATIONS, migrationsRun: true, logging: false }),
        McpModule.forRoot({ auth: (token) => (token === TOKEN ? 'soak' : null), limits: { sessionsPerPrincipal: SESSIONS + CONCURRENCY } }),
      ],
      providers: [SoakTools],
    })
    class SoakModule {}
    app = await NestFactory.create(SoakModule, { logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/mcp`;
    const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-11-25' };
    const callsPerSession = Math.max(1, Math.floor(REQUESTS / SESSIONS));

    let requests = 0;
    let aborted = 0;
    let failures = 0;
    let sessionsDone = 0;
    const started = Date.now();
    const gc = (globalThis as { gc?: () => void }).gc;
    const rss = () => {
      gc?.();
      return process.memoryUsage().rss;
    };
    const baseline = rss();
    console.log(`soak: ${REQUESTS} tools/call over ${SESSIONS} sessions (${callsPerSession} per session), concurrency ${CONCURRENCY}, every ${ABORT_EVERY}th call aborted${gc ? ', RSS after gc' : ''}`);
    console.log('elapsed_s  sessions  requests  rss_mib');
    console.log(`${'0'.padStart(9)}  ${'0'.padStart(8)}  ${'0'.padStart(8)}  ${mib(baseline).padStart(7)}`);
    let nextReport = Math.max(1, Math.floor(REQUESTS / 20));

    const runSession = async (index: number) => {
      const init = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'soak', version: '1' } } }),
      });
      await init.text();
      const sessionId = init.headers.get('mcp-session-id');
      if (!sessionId) return void (failures += 1);
      const session = { ...headers, 'Mcp-Session-Id': sessionId };
      for (let call = 0; call < callsPerSession; call++) {
        const n = ++requests;
        const body = JSON.stringify({ jsonrpc: '2.0', id: call + 1, method: 'tools/call', params: { name: 'echo', arguments: { text: `s${index}c${call}` }, _meta: { progressToken: call } } });
        if (n % ABORT_EVERY === 0) {
          // The client goes away mid-request: the server must let go of everything it held for it.
          const controller = new AbortController();
          const pending = fetch(url, { method: 'POST', headers: session, body, signal: controller.signal }).then((r) => r.text());
          controller.abort();
          await pending.catch(() => undefined);
          aborted += 1;
        } else {
          const reply = await fetch(url, { method: 'POST', headers: session, body });
          const text = await reply.text();
          if (reply.status !== 200 || !text.includes(`s${index}c${call}`)) failures += 1;
        }
        if (requests >= nextReport) {
          nextReport += Math.max(1, Math.floor(REQUESTS / 20));
          console.log(`${((Date.now() - started) / 1000).toFixed(1).padStart(9)}  ${String(sessionsDone).padStart(8)}  ${String(requests).padStart(8)}  ${mib(rss()).padStart(7)}`);
        }
      }
      // Half end with DELETE, half are abandoned (they expire idle).
      if (index % 2 === 0) await (await fetch(url, { method: 'DELETE', headers: session })).text();
      sessionsDone += 1;
    };

    let nextSession = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (nextSession < SESSIONS) await runSession(nextSession++);
      }),
    );
    const toolset = app.get(Toolset, { strict: false });
    const registry = app.get(McpStreamRegistry, { strict: false });
    const sizes = {
      inFlight: toolset.inFlightCount,
      pendingClientRequests: app.get(McpPendingClientRequests, { strict: false }).size,
      ...registry.sizes,
      listenStreams: app.get(McpListenStreams, { strict: false }).size,
    };
    const seconds = (Date.now() - started) / 1000;
    console.log(`${seconds.toFixed(1).padStart(9)}  ${String(sessionsDone).padStart(8)}  ${String(requests).padStart(8)}  ${mib(rss()).padStart(7)}`);
    console.log(`done: ${requests} calls (${aborted} aborted, ${failures} failed) in ${seconds.toFixed(1)} s, ${(requests / seconds).toFixed(0)} calls/s; RSS ${mib(baseline)} -> ${mib(rss())} MiB`);
    console.log(`mount state after the run: ${JSON.stringify(sizes)}`);
    if (failures || Object.values(sizes).some((size) => size !== 0)) process.exitCode = 1;
  } finally {
    await app?.close();
    await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
