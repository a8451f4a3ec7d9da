/**
 * `npm run bench:segments`: where one `tools/call` spends its time at c=1, ours against the
 * audit floor, measured inside each server's own process (bench/server/segments.preload.ts). The
 * floor (`bare-http(pg)`) commits the same row per request and does nothing else, so the
 * difference between the two lines is what the library adds, segment by segment:
 *
 *   to insert     the POST's headers read -> the audit INSERT handed to the connection
 *   insert        the INSERT handed over -> its result's callback (PostgreSQL, the wire, waking up)
 *   to answer     the INSERT's result -> res.end
 *   answer write  inside res.end (the answer written to the socket)
 *   to next       res.end -> the next POST's headers (the client's turn, then Node reads the request)
 *
 * One connection, requests one after another, `BENCH_ROUNDS` rounds of `BENCH_SECONDS` seconds
 * per target after a warm-up, both audit commit modes (`sync`: ours / bare-http(pg); `async`:
 * ours-async / bare-http-async(pg)); medians of the rounds' medians. The client's p50 is the
 * round trip as the load sees it. Each target has a throwaway database (`BENCH_PG_URL`, else
 * `TEST_PG_URL`, else the local test server), dropped at the end.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ts from 'typescript';
import { loadBenchConfig } from './server/bench.config';
import { runBench } from './server/bench.cleanup';
import { median } from './server/bench.report';
import { createBenchDatabase } from './server/bench.database';
import { benchTargets } from './server/bench.targets';
import { openMcpSession, type McpBenchSession } from './server/mcp.session';
import type { SegmentMedians } from './server/segments.preload';
import { freePort, TargetProcess, type TargetSpec } from './server/target.process';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
const TOKEN = 'segments-bench-token';
const PAIRS = [
  { commit: 'sync', floor: 'bare-pg', ours: 'ours' },
  { commit: 'async', floor: 'bare-pg-async', ours: 'ours-async' },
] as const;
const COLUMNS: [keyof SegmentMedians, string][] = [
  ['toInsert', 'to insert'],
  ['insert', 'insert'],
  ['toAnswer', 'to answer'],
  ['answerWrite', 'answer write'],
  ['toNext', 'to next'],
];

/** The preload as JavaScript in a temporary directory, for `node --require`. */
function compilePreload(dir: string): string {
  const source = join(__dirname, 'server', 'segments.preload.ts');
  const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
    fileName: source,
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  });
  const file = join(dir, 'segments.preload.js');
  writeFileSync(file, outputText);
  return file;
}

/** `tools/call echo` on one keep-alive connection, one request after another, for `seconds`; the round trips in µs. */
async function driveOneConnection(url: string, session: McpBenchSession, seconds: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const target = new URL(url);
  const latencies: number[] = [];
  const until = Date.now() + seconds * 1000;
  try {
    for (let id = 1; Date.now() < until; id++) {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hello' }, ...(session.meta ? { _meta: session.meta } : {}) },
      });
      const started = process.hrtime.bigint();
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: target.hostname,
            port: target.port,
            path: target.pathname,
            method: 'POST',
            agent,
            headers: { ...session.headers, 'Content-Length': Buffer.byteLength(body) },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      latencies.push(Number(process.hrtime.bigint() - started) / 1000);
      if (status !== 200) throw new Error(`${url} answered ${status} to tools/call`);
    }
  } finally {
    agent.destroy();
  }
  return latencies;
}

/** The medians the target's preload appended since the last read. */
async function readSegments(target: TargetProcess, file: string): Promise<SegmentMedians> {
  const before = readFileSync(file, 'utf8').length;
  process.kill(target.pid, 'SIGUSR2');
  for (let tries = 0; tries < 100; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const text = readFileSync(file, 'utf8');
    if (text.length > before && text.endsWith('\n')) return JSON.parse(text.slice(before).trim()) as SegmentMedians;
  }
  throw new Error(`${target.spec.label} did not report its segments`);
}

interface TargetResult {
  label: string;
  p50: number;
  segments: SegmentMedians;
}

async function measure(spec: TargetSpec, repoRoot: string, preload: string, file: string): Promise<TargetResult> {
  writeFileSync(file, '');
  const target = await TargetProcess.start(
    {
      ...spec,
      nodeArgs: [...(spec.nodeArgs ?? []), '--require', preload],
      env: { ...spec.env, BENCH_SEGMENTS_FILE: file },
    },
    await freePort(),
    spec.cwd ?? repoRoot,
  );
  try {
    const session = await openMcpSession(target.url, TOKEN);
    await driveOneConnection(target.url, session, WARMUP_SECONDS);
    await readSegments(target, file);
    const rounds: { p50: number; segments: SegmentMedians }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const latencies = await driveOneConnection(target.url, session, SECONDS);
      rounds.push({ p50: median(latencies), segments: await readSegments(target, file) });
      target.assertAlive();
    }
    const segments = { requests: rounds.reduce((sum, r) => sum + r.segments.requests, 0) } as SegmentMedians;
    for (const [key] of COLUMNS) segments[key] = median(rounds.map((r) => r.segments[key]));
    return { label: spec.label, p50: median(rounds.map((r) => r.p50)), segments };
  } finally {
    await target.stop();
  }
}

function row(label: string, p50: number, segments: Pick<SegmentMedians, (typeof COLUMNS)[number][0]>): string {
  const cells = COLUMNS.map(([key, title]) => String(Math.round(segments[key])).padStart(title.length + 2));
  return `${label.padEnd(22)} ${String(Math.round(p50)).padStart(9)}${cells.join('')}`;
}

runBench('bench:segments', async (cleanup) => {
  const config = loadBenchConfig();
  const repoRoot = join(__dirname, '..');
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-segments-'));
  cleanup.add('remove the preload', async () => rmSync(dir, { recursive: true, force: true }));
  const preload = compilePreload(dir);
  const databaseUrls: Record<string, string> = {};
  for (const pair of PAIRS) {
    for (const key of [pair.floor, pair.ours]) {
      const database = await createBenchDatabase(config.pgAdminUrl);
      cleanup.add(`drop ${database.name}`, () => database.drop());
      databaseUrls[key] = database.url;
    }
  }
  const specs = benchTargets({ repoRoot, databaseUrls, token: TOKEN }, Object.keys(databaseUrls));
  console.log(
    `bench:segments  c=1, ${ROUNDS} round(s) of ${SECONDS} s per target after ${WARMUP_SECONDS} s of warm-up, medians in µs, node ${process.version}`,
  );
  const header = `${'target'.padEnd(22)} ${'client p50'.padStart(9)}${COLUMNS.map(([, title]) => title.padStart(title.length + 2)).join('')}`;
  for (const pair of PAIRS) {
    const spec = (key: string) => {
      const found = specs.find((s) => s.key === key);
      if (!found) throw new Error(`no bench target ${key}`);
      return found;
    };
    const floor = await measure(spec(pair.floor), repoRoot, preload, join(dir, `${pair.floor}.jsonl`));
    const ours = await measure(spec(pair.ours), repoRoot, preload, join(dir, `${pair.ours}.jsonl`));
    console.log(`\n== ${pair.commit} audit commit ==`);
    console.log(header);
    console.log(row(floor.label, floor.p50, floor.segments));
    console.log(row(ours.label, ours.p50, ours.segments));
    const difference = Object.fromEntries(
      COLUMNS.map(([key]) => [key, ours.segments[key] - floor.segments[key]]),
    ) as Pick<SegmentMedians, (typeof COLUMNS)[number][0]>;
    console.log(row('ours - floor', ours.p50 - floor.p50, difference));
  }
  return 0;
});
