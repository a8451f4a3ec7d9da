/**
 * `npm run bench:retention`: what the retention pruner costs the hot path. One throwaway
 * database gets BENCH_ROWS (default 5,000,000) old `mcp_events` rows, cloned in SQL
 * (generate_series) from the rows a short real load wrote, so their mix and sizes are the real
 * ones. The example app (`dist/main.js`, no retention) then serves tools/call `echo` at c=8
 * (autocannon) in BENCH_ROUNDS rounds of two windows: one with nothing pruning (the baseline),
 * one while a second process of the app, started with `RETENTION_EVENTS_MS`, prunes the same
 * database (stopped at the end of the window). Prints the medians of p50/p99 and throughput of
 * both and their ratio, the rows per second pruned (in the windows, and over a whole run without
 * load at the end), the bytes per `mcp_events` row and the rows each call writes.
 *
 * Environment: BENCH_ROWS (default 5000000), BENCH_ROUNDS (default 3), BENCH_SECONDS (default 10),
 * BENCH_WARMUP_SECONDS (default 2), BENCH_CONNECTIONS (default 8), RETENTION_BATCH_SIZE (default
 * the module's 1000), BENCH_DRAIN_SECONDS (how long the final run may take; default 1200),
 * BENCH_PG_URL. Results go to stdout, progress to stderr.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MCP_ENTITIES, MCP_MIGRATIONS } from '../src/mcp';
import { runBench, type BenchCleanup } from './server/bench.cleanup';
import { createBenchDatabase, type BenchDatabase } from './server/bench.database';
import { runLoad, type LoadResult } from './server/load.runner';
import { openMcpSession } from './server/mcp.session';
import { TargetProcess, freePort, type TargetSpec } from './server/target.process';
import { progress, positiveIntegerEnv } from './support/env';

const repoRoot = join(__dirname, '..');
const DAY_MS = 86_400_000;
/** Old rows are 30 to 37 days old; the pruner keeps 7 days. */
const OLD_AGE_DAYS = 30;
const RETENTION_MS = 7 * DAY_MS;
const CLONE_CHUNK = 1_000_000;

async function query<T>(client: Client, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await client.query(sql, params)).rows as T[];
}

/** Rows older than the retention horizon (what the pruner has left to delete). */
async function oldRows(client: Client): Promise<number> {
  const rows = await query<{ n: string }>(
    client,
    `SELECT count(*) AS n FROM mcp_events WHERE created_at < LOCALTIMESTAMP - interval '${OLD_AGE_DAYS - 1} days'`,
  );
  return Number(rows[0].n);
}

function appSpec(token: string, db: BenchDatabase, env: Record<string, string | undefined>): TargetSpec {
  return {
    key: 'ours',
    label: 'ours(pg)',
    role: 'ours',
    checksToken: true,
    database: true,
    args: [join('dist', 'main.js')],
    env: {
      DATABASE_URL: db.url,
      MCP_TOKENS: `bench=${token}`,
      REDIS_URL: undefined,
      HTTP_ADAPTER: undefined,
      AUDIT_COMMIT: undefined,
      RETENTION_EVENTS_MS: undefined,
      ...env,
    },
    readyTimeoutMs: 60_000,
    token,
  };
}

/** Waits until the pruning app's pruner has sent its first DELETE (its backend shows it in pg_stat_activity). */
async function waitForPruning(client: Client): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const rows = await query<{ n: string }>(
      client,
      `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'DELETE FROM "mcp_events"%'`,
    );
    if (Number(rows[0].n) > 0) return;
    await delay(100);
  }
  throw new Error('the pruning app sent no DELETE within 60 s');
}

function checked(result: LoadResult, phase: string): LoadResult {
  if (result.non2xx || result.badBodies || result.errors) {
    throw new Error(
      `${phase}: non-2xx ${result.non2xx}, wrong bodies ${result.badBodies}, errors ${result.errors}; e.g. ${result.samples.join(' | ')}`,
    );
  }
  return result;
}

const ms = (value: number) => `${value.toFixed(2)} ms`;
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

async function main(cleanup: BenchCleanup): Promise<number> {
  const rowsWanted = positiveIntegerEnv('BENCH_ROWS', 5_000_000);
  const seconds = positiveIntegerEnv('BENCH_SECONDS', 10);
  const warmupSeconds = positiveIntegerEnv('BENCH_WARMUP_SECONDS', 2);
  const connections = positiveIntegerEnv('BENCH_CONNECTIONS', 8);
  const drainSeconds = positiveIntegerEnv('BENCH_DRAIN_SECONDS', 1200);
  const rounds = positiveIntegerEnv('BENCH_ROUNDS', 3);
  const batchSize = process.env.RETENTION_BATCH_SIZE?.trim() || undefined;
  const pgAdminUrl =
    process.env.BENCH_PG_URL?.trim() || process.env.TEST_PG_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test';
  const token = randomBytes(24).toString('base64url');

  const db = await createBenchDatabase(pgAdminUrl);
  cleanup.add(`drop database ${db.name}`, () => db.drop());
  progress(`database ${db.name} created`);
  const migrations = new DataSource({
    type: 'postgres',
    url: db.url,
    entities: MCP_ENTITIES,
    migrations: MCP_MIGRATIONS,
  });
  await migrations.initialize();
  await migrations.runMigrations();
  await migrations.destroy();
  const client = new Client({ connectionString: db.url });
  await client.connect();
  cleanup.add('close the bench connection', () => client.end());

  // 1. The baseline app writes real rows: their mix is what the old rows are cloned from.
  const app = await TargetProcess.start(appSpec(token, db, {}), await freePort(), repoRoot);
  cleanup.add('stop the baseline app', () => app.stop());
  const session = await openMcpSession(app.url, token);
  const before = Number((await query<{ n: string }>(client, 'SELECT count(*) AS n FROM mcp_events'))[0].n);
  const sample = checked(await runLoad(app.url, session, connections, warmupSeconds), 'sample load');
  const sampleRows = Number((await query<{ n: string }>(client, 'SELECT count(*) AS n FROM mcp_events'))[0].n) - before;
  progress(`sample: ${sample.completed} calls answered, ${sampleRows} rows written`);
  // Rows per call, counted exactly: sequential calls, nothing in flight before or after.
  const counted = 20;
  const beforeCounted = Number((await query<{ n: string }>(client, 'SELECT count(*) AS n FROM mcp_events'))[0].n);
  for (let i = 0; i < counted; i++) {
    const res = await fetch(app.url, {
      method: 'POST',
      headers: session.headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: `count-${i}`,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'count' } },
      }),
    });
    if (res.status !== 200) throw new Error(`counted call answered ${res.status}: ${await res.text()}`);
    await res.text();
  }
  const rowsPerCall =
    (Number((await query<{ n: string }>(client, 'SELECT count(*) AS n FROM mcp_events'))[0].n) - beforeCounted) /
    counted;
  progress(`${counted} sequential calls wrote ${rowsPerCall * counted} rows (${rowsPerCall} per call)`);

  // 2. Clone them as old rows, in chunks (every column but id and created_at copied as it is).
  const columns = (
    await query<{ name: string }>(
      client,
      `SELECT column_name AS name FROM information_schema.columns WHERE table_name = 'mcp_events' AND column_name NOT IN ('id', 'created_at') ORDER BY ordinal_position`,
    )
  ).map((c) => `"${c.name}"`);
  await client.query(`CREATE TEMP TABLE sample AS SELECT row_number() OVER () - 1 AS k, * FROM mcp_events`);
  const sampleCount = Number((await query<{ n: string }>(client, 'SELECT count(*) AS n FROM sample'))[0].n);
  const cloneStarted = Date.now();
  for (let done = 0; done < rowsWanted; done += CLONE_CHUNK) {
    const n = Math.min(CLONE_CHUNK, rowsWanted - done);
    await client.query(
      `INSERT INTO mcp_events ("id", "created_at", ${columns.join(', ')})
       SELECT gen_random_uuid()::text, LOCALTIMESTAMP - interval '${OLD_AGE_DAYS} days' - ((g * 7919) % 604800) * interval '1 second', ${columns.map((c) => `s.${c}`).join(', ')}
         FROM generate_series($1::bigint, $2::bigint) AS g JOIN sample s ON s.k = g % $3`,
      [done, done + n - 1, sampleCount],
    );
    progress(`  ${done + n} of ${rowsWanted} old rows inserted (${Math.round((Date.now() - cloneStarted) / 1000)} s)`);
  }
  await client.query('VACUUM ANALYZE mcp_events');
  const totalRows = Number((await query<{ n: string }>(client, 'SELECT count(*) AS n FROM mcp_events'))[0].n);
  const totalBytes = Number(
    (await query<{ n: string }>(client, `SELECT pg_total_relation_size('mcp_events') AS n`))[0].n,
  );
  const heapBytes = Number((await query<{ n: string }>(client, `SELECT pg_relation_size('mcp_events') AS n`))[0].n);
  const bytesPerRow = totalBytes / totalRows;
  const methods = await query<{ method: string | null; n: string }>(
    client,
    `SELECT method, count(*) AS n FROM sample GROUP BY method ORDER BY count(*) DESC`,
  );
  const oldBefore = await oldRows(client);
  progress(
    `${totalRows} rows, ${mib(totalBytes)} with indexes (${bytesPerRow.toFixed(0)} bytes per row), ${oldBefore} old`,
  );

  // 3. Rounds on the same app (no retention of its own): a baseline window with nothing pruning,
  // then a window while a second process of the app, started with retention on, prunes the same
  // database (its pruner starts one second after boot; stopping it rolls its batch back).
  const pruningSpec = appSpec(token, db, {
    RETENTION_EVENTS_MS: String(RETENTION_MS),
    RETENTION_INTERVAL_MS: '1000',
    ...(batchSize ? { RETENTION_BATCH_SIZE: batchSize } : {}),
  });
  let pruner: TargetProcess | null = null;
  cleanup.add('stop the pruning app', async () => void (await pruner?.stop()));
  const baselines: LoadResult[] = [];
  const prunings: LoadResult[] = [];
  let prunedInWindows = 0;
  let windowSeconds = 0;
  checked(await runLoad(app.url, session, connections, warmupSeconds), 'warm-up');
  for (let round = 1; round <= rounds; round++) {
    const oldAtBaseline = await oldRows(client);
    const baseline = checked(await runLoad(app.url, session, connections, seconds), `round ${round} baseline`);
    if ((await oldRows(client)) !== oldAtBaseline)
      throw new Error('old rows disappeared during a baseline: something else prunes this database');
    baselines.push(baseline);
    pruner = await TargetProcess.start(pruningSpec, await freePort(), repoRoot);
    await waitForPruning(client);
    const oldAtStart = await oldRows(client);
    const started = Date.now();
    const pruning = checked(await runLoad(app.url, session, connections, seconds), `round ${round} pruning`);
    windowSeconds += (Date.now() - started) / 1000;
    const oldAtEnd = await oldRows(client);
    prunedInWindows += oldAtStart - oldAtEnd;
    await pruner.stop();
    pruner = null;
    prunings.push(pruning);
    progress(
      `round ${round}: baseline p50 ${ms(baseline.p50Ms)} p99 ${ms(baseline.p99Ms)} ${baseline.reqPerSec.toFixed(0)} req/s; ` +
        `pruning p50 ${ms(pruning.p50Ms)} p99 ${ms(pruning.p99Ms)} ${pruning.reqPerSec.toFixed(0)} req/s; old rows ${oldAtStart} -> ${oldAtEnd}`,
    );
  }
  await app.stop();

  // 4. Drain: the pruning app alone, until every old row is gone, to measure a whole run.
  const drainStarted = Date.now();
  pruner = await TargetProcess.start(pruningSpec, await freePort(), repoRoot);
  let left = await oldRows(client);
  const drainDeadline = Date.now() + drainSeconds * 1000;
  while (left > 0 && Date.now() < drainDeadline) {
    await delay(5000);
    left = await oldRows(client);
    progress(`  ${left} old rows left (${Math.round((Date.now() - drainStarted) / 1000)} s)`);
  }
  await delay(1500);
  const logged = /Retention run deleted mcp_events: (\d+) rows in (\d+) batches[^(]*\((\d+) ms\)/.exec(
    pruner.outputTail,
  );
  await pruner.stop();
  pruner = null;
  const afterBytes = Number(
    (await query<{ n: string }>(client, `SELECT pg_total_relation_size('mcp_events') AS n`))[0].n,
  );

  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const summary = (runs: LoadResult[]) => ({
    p50: median(runs.map((r) => r.p50Ms)),
    p99: median(runs.map((r) => r.p99Ms)),
    rps: median(runs.map((r) => r.reqPerSec)),
  });
  const base = summary(baselines);
  const prune = summary(prunings);
  console.log(
    `\nbench:retention  ${rowsWanted} old mcp_events rows, tools/call echo at c=${connections}, ${rounds} round(s) of ${seconds} s per window, medians, node ${process.version}`,
  );
  console.log(
    "the load goes to one app process without retention; in each round's second window a second app process with RETENTION_EVENTS_MS prunes the same database",
  );
  console.log(
    `table: ${totalRows} rows, ${mib(totalBytes)} with indexes (${mib(heapBytes)} heap): ${bytesPerRow.toFixed(0)} bytes per row`,
  );
  console.log(
    `row mix (cloned from a real load): ${methods.map((m) => `${m.method ?? '(none)'} ${m.n}`).join(', ')}; ${rowsPerCall} row(s) per tools/call (counted over ${counted} sequential calls)`,
  );
  console.log(`baseline (no pruning):     p50 ${ms(base.p50)}  p99 ${ms(base.p99)}  ${base.rps.toFixed(0)} req/s`);
  console.log(`while pruning:             p50 ${ms(prune.p50)}  p99 ${ms(prune.p99)}  ${prune.rps.toFixed(0)} req/s`);
  console.log(
    `ratio pruning/baseline:    p50 x${(prune.p50 / base.p50).toFixed(2)}  p99 x${(prune.p99 / base.p99).toFixed(2)}  throughput x${(prune.rps / base.rps).toFixed(2)}`,
  );
  console.log(
    `pruned during the measured windows: ${prunedInWindows} rows in ${windowSeconds.toFixed(1)} s = ${(prunedInWindows / windowSeconds).toFixed(0)} rows/s`,
  );
  if (logged) {
    const [, rows, batches, duration] = logged;
    console.log(
      `pruner run (drain, no load): ${rows} rows in ${batches} batches in ${(Number(duration) / 1000).toFixed(1)} s = ${(Number(rows) / (Number(duration) / 1000)).toFixed(0)} rows/s`,
    );
  } else if (left > 0) {
    console.log(`pruner run: not finished after ${drainSeconds} s (${left} old rows left)`);
  }
  console.log(
    `table after pruning: ${mib(afterBytes)} (space is reused by new rows; VACUUM FULL or the partition mode returns it to the OS)`,
  );
  for (const rate of [10, 100]) {
    const rows = rate * 86_400 * rowsPerCall;
    console.log(
      `growth at ${rate} calls/s: ${Math.round(rows).toLocaleString('en-US')} rows/day, ${mib(rows * bytesPerRow)}/day`,
    );
  }
  return 0;
}

runBench('bench:retention', main);
