/**
 * Soak: drives many requests and sessions through one app on PostgreSQL and samples the resident
 * set size (after a full collection) as it goes, to show that per-session and per-request state
 * does not accumulate: it prints the RSS slope through the samples taken after the warm-up (the
 * median of pair slopes, robust to the allocator's jumps; the least-squares slope beside it), in
 * KB per 10k requests (goal: below 50), and compares the `mcp_events` rows
 * with the requests the server answered (goal: equal).
 *
 *   npm run bench:soak
 *
 * Environment: SOAK_REQUESTS (default 200000 tools/call), SOAK_SESSIONS (default 2000; each
 * initializes, calls, and ends by DELETE or by being abandoned), SOAK_CONCURRENCY (default 32),
 * SOAK_ABORT_EVERY (default 50: every n-th call is aborted by the client mid-flight),
 * SOAK_WARMUP (default 0.2: the share of the requests before the first RSS sample that counts
 * for the slope), SOAK_SAMPLES (default 50 RSS samples over the run), BENCH_PG_URL (the
 * PostgreSQL server a throwaway database is created on). The app and the load run in this
 * process on loopback; run with `node --expose-gc -r ts-node/register/transpile-only` to sample
 * RSS after a full collection. At the end it prints the map sizes of the mount, which must be
 * zero. Exits non-zero on a failed call, a map left non-empty or a missing audit row; a slope
 * above the goal is reported as MISS without failing the run.
 */
import 'reflect-metadata';
import { Injectable, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { MCP_ENTITIES, MCP_MIGRATIONS, McpModule, McpTool, type McpToolContext } from '../src/mcp';
import { McpPendingClientRequests } from '../src/mcp/server/sessions/mcp-session-channel-pending';
import { McpStreamRegistry } from '../src/mcp/server/sessions/mcp-stream-registry';
import { McpListenStreams } from '../src/mcp/server/stateless/listen-stream-registry';
import { createBenchDatabase } from './server/bench.database';
import { Toolset } from '../src/mcp/transports';

function setting(name: string, fallback: number, check: (value: number) => boolean, what: string): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || !check(value))
    throw new Error(`${name}="${raw}" is not ${what} (example: ${name}=${fallback})`);
  return value;
}

const count = (value: number) => Number.isInteger(value) && value > 0;
const REQUESTS = setting('SOAK_REQUESTS', 200_000, count, 'a positive integer');
const SESSIONS = setting('SOAK_SESSIONS', 2_000, count, 'a positive integer');
const CONCURRENCY = setting('SOAK_CONCURRENCY', 32, count, 'a positive integer');
const ABORT_EVERY = setting('SOAK_ABORT_EVERY', 50, count, 'a positive integer');
const WARMUP = setting('SOAK_WARMUP', 0.2, (v) => v >= 0 && v < 1, 'a share from 0 to below 1');
const SAMPLES = setting('SOAK_SAMPLES', 50, (v) => count(v) && v >= 3, 'an integer of at least 3');
const PG_ADMIN_URL = process.env.BENCH_PG_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test';
const TOKEN = randomBytes(24).toString('base64url');
/** The goal: RSS grows by less than this many KB per 10k requests once warm. */
const SLOPE_GOAL_KB = 50;
/** Marks the text of a call the client aborts, so its audit row (if the server wrote one) can be told apart. */
const ABORTED = 'aborted:';

/**
 * Theil-Sen slope of y over x: the median of the slopes between every pair of samples. RSS after
 * a collection still jumps when the allocator hands pages back or takes them again; one such dip
 * early in the window tilts a least-squares line, while the median of pair slopes follows the
 * trend of most samples. Both are printed; the goal is judged on this one.
 */
function medianPairSlope(points: { x: number; y: number }[]): number {
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i++) {
    for (let j = i + 1; j < points.length; j++) {
      if (points[j].x !== points[i].x) slopes.push((points[j].y - points[i].y) / (points[j].x - points[i].x));
    }
  }
  if (!slopes.length) return NaN;
  slopes.sort((a, b) => a - b);
  const mid = slopes.length >> 1;
  return slopes.length % 2 ? slopes[mid] : (slopes[mid - 1] + slopes[mid]) / 2;
}

/** Least-squares slope of y over x. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  const mx = points.reduce((sum, p) => sum + p.x, 0) / n;
  const my = points.reduce((sum, p) => sum + p.y, 0) / n;
  const sxy = points.reduce((sum, p) => sum + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((sum, p) => sum + (p.x - mx) ** 2, 0);
  return sxx ? sxy / sxx : NaN;
}

/** Audit rows of the soak database: all, those of aborted calls, and per kind/method/status. */
async function auditRows(url: string): Promise<{ total: number; aborted: number; groups: string }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{
      kind: string;
      method: string | null;
      status: number | null;
      rows: string;
      aborted: string;
    }>(
      `SELECT kind, method, status, count(*) AS rows,
              count(*) FILTER (WHERE request->'params'->'arguments'->>'text' LIKE $1) AS aborted
         FROM mcp_events GROUP BY kind, method, status ORDER BY count(*) DESC`,
      [`${ABORTED}%`],
    );
    return {
      total: rows.reduce((sum, row) => sum + Number(row.rows), 0),
      aborted: rows.reduce((sum, row) => sum + Number(row.aborted), 0),
      groups: rows.map((row) => `${row.kind} ${row.method ?? '-'} ${row.status ?? '-'}: ${row.rows}`).join(', '),
    };
  } finally {
    await client.end();
  }
}

/** The audit rows once their count has held still for a moment (asynchronous commits may still be landing). */
async function settledAuditRows(url: string, deadlineMs: number): ReturnType<typeof auditRows> {
  const deadline = Date.now() + deadlineMs;
  let last = await auditRows(url);
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const next = await auditRows(url);
    if (next.total === last.total) return next;
    last = next;
  }
  return last;
}

@Injectable()
class SoakTools {
  @McpTool({
    description: 'Echoes text',
    input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  })
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
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: db.url,
          entities: MCP_ENTITIES,
          migrations: MCP_MIGRATIONS,
          migrationsRun: true,
          logging: false,
        }),
        McpModule.forRoot({
          auth: (token) => (token === TOKEN ? 'soak' : null),
          advanced: { limits: { sessionsPerPrincipal: SESSIONS + CONCURRENCY } },
        }),
      ],
      providers: [SoakTools],
    })
    class SoakModule {}
    app = await NestFactory.create(SoakModule, { logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/mcp`;
    const headers = {
      Authorization: `Bearer ${TOKEN}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    };
    const callsPerSession = Math.max(1, Math.floor(REQUESTS / SESSIONS));
    const total = callsPerSession * SESSIONS;

    let requests = 0;
    let aborted = 0;
    let failures = 0;
    /** Responses the client received: initialize, completed (not aborted) calls, DELETE. */
    let answered = 0;
    let sessionsDone = 0;
    const started = Date.now();
    const gc = (globalThis as { gc?: () => void }).gc;
    const memory = () => {
      gc?.();
      const { rss, heapUsed } = process.memoryUsage();
      return { rss, heapUsed };
    };
    const baseline = memory();
    // RSS is the goal; the V8 heap beside it tells a leak of objects from the allocator keeping pages.
    const samples: { x: number; y: number }[] = [];
    const heapSamples: { x: number; y: number }[] = [];
    const warmupRequests = Math.floor(total * WARMUP);
    const every = Math.max(1, Math.floor(total / SAMPLES));
    console.log(
      `soak: ${total} tools/call over ${SESSIONS} sessions (${callsPerSession} per session), concurrency ${CONCURRENCY}, every ${ABORT_EVERY}th call aborted, ` +
        `${gc ? 'RSS after gc' : 'RSS without gc (run with node --expose-gc for a stable slope)'}, slope from request ${warmupRequests} on`,
    );
    console.log('elapsed_s  sessions  requests  rss_mib  heap_mib');
    const report = (sample: { rss: number; heapUsed: number }) =>
      console.log(
        `${((Date.now() - started) / 1000).toFixed(1).padStart(9)}  ${String(sessionsDone).padStart(8)}  ${String(requests).padStart(8)}  ` +
          `${mib(sample.rss).padStart(7)}  ${mib(sample.heapUsed).padStart(8)}`,
      );
    report(baseline);
    let nextSample = every;

    const runSession = async (index: number) => {
      const init = await fetch(url, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'soak', version: '1' } },
        }),
      });
      await init.text();
      answered += 1;
      const sessionId = init.headers.get('mcp-session-id');
      if (!sessionId) return void (failures += 1);
      const session = { ...headers, 'Mcp-Session-Id': sessionId };
      for (let call = 0; call < callsPerSession; call++) {
        const n = ++requests;
        const abort = n % ABORT_EVERY === 0;
        const text = `${abort ? ABORTED : ''}s${index}c${call}`;
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id: call + 1,
          method: 'tools/call',
          params: { name: 'echo', arguments: { text }, _meta: { progressToken: call } },
        });
        if (abort) {
          // The client goes away mid-request: the server must let go of everything it held for it.
          const controller = new AbortController();
          const pending = fetch(url, { method: 'POST', headers: session, body, signal: controller.signal }).then((r) =>
            r.text(),
          );
          controller.abort();
          await pending.catch(() => undefined);
          aborted += 1;
        } else {
          const reply = await fetch(url, { method: 'POST', headers: session, body });
          const replyText = await reply.text();
          answered += 1;
          if (reply.status !== 200 || !replyText.includes(text)) failures += 1;
        }
        if (requests >= nextSample) {
          nextSample += every;
          const sample = memory();
          if (requests >= warmupRequests) {
            samples.push({ x: requests, y: sample.rss });
            heapSamples.push({ x: requests, y: sample.heapUsed });
          }
          report(sample);
        }
      }
      // Half end with DELETE, half are abandoned (they expire idle).
      if (index % 2 === 0) {
        await (await fetch(url, { method: 'DELETE', headers: session })).text();
        answered += 1;
      }
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
    const end = memory();
    report(end);
    console.log(
      `done: ${requests} calls (${aborted} aborted, ${failures} failed) in ${seconds.toFixed(1)} s, ${(requests / seconds).toFixed(0)} calls/s; ` +
        `RSS ${mib(baseline.rss)} -> ${mib(end.rss)} MiB, heap ${mib(baseline.heapUsed)} -> ${mib(end.heapUsed)} MiB`,
    );
    console.log(`mount state after the run: ${JSON.stringify(sizes)}`);

    const kbPer10k = (medianPairSlope(samples) * 10_000) / 1024;
    const leastSquares = (slope(samples) * 10_000) / 1024;
    const slopeMeasured = samples.length >= 3 && Number.isFinite(kbPer10k);
    console.log(
      `rss slope (median of pair slopes; least squares ${Number.isFinite(leastSquares) ? leastSquares.toFixed(1) : '-'}): ${slopeMeasured ? kbPer10k.toFixed(1) : '-'} KB per 10k requests over ${samples.length} post-gc samples after request ${warmupRequests} ` +
        `(goal < ${SLOPE_GOAL_KB}) -> ${slopeMeasured ? (kbPer10k < SLOPE_GOAL_KB ? 'PASS' : 'MISS') : 'not measured (too few samples)'}${gc ? '' : ' [no --expose-gc: samples are not post-gc]'}`,
    );

    console.log(
      `heap slope (for diagnosis, no goal): ${((medianPairSlope(heapSamples) * 10_000) / 1024).toFixed(1)} KB per 10k requests (least squares ${((slope(heapSamples) * 10_000) / 1024).toFixed(1)}) over the same samples`,
    );

    const audit = await settledAuditRows(db.url, 15_000);
    const rows = audit.total - audit.aborted;
    console.log(
      `rows == answered: mcp_events rows ${rows} (not counting ${audit.aborted} rows of the ${aborted} aborted calls) vs ${answered} answered requests ` +
        `(initialize, calls, DELETE) -> ${rows === answered ? 'PASS' : 'MISS'}`,
    );
    console.log(`events by kind/method/status: ${audit.groups}`);
    if (failures || rows !== answered || Object.values(sizes).some((size) => size !== 0)) process.exitCode = 1;
  } finally {
    await app?.close();
    await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
