/**
 * `npm run bench:events`: `mcp_events` at size. One throwaway database (dropped at the end, also on
 * Ctrl-C) gets the migrations and the day partitioning (`MCP_PARTITIONING_MIGRATIONS`, the
 * partitions made by the pruner's own `EventPartitions`), then BENCH_EVENTS_ROWS rows spread over
 * BENCH_EVENTS_DAYS day partitions, generated in SQL (INSERT ... SELECT generate_series, in
 * chunks): a mix of mounts, interleaved sessions, principals, methods, statuses and echo-like jsonb
 * requests and responses. It prints the time that took, the disk it used (the partitions' total
 * size, bytes per row, the WAL the server wrote meanwhile) and then, at that size:
 *
 * - the audit path's insert rate: the module's event sink (`TypeOrmEventSink`, its group committer)
 *   recording rows from BENCH_EVENTS_CONCURRENCY callers for BENCH_EVENTS_INSERT_SECONDS, rows/s and
 *   p50/p99 of one `record` (the commit a response waits for); the same on the empty table first;
 * - the console's queries: each query `McpAuditQuery` issues for the console's pages, timed (median
 *   of three), with its plan (EXPLAIN ANALYZE: partitions scanned, indexes used);
 * - the pruner: `RetentionPruner` of a mount with the partition mode, once (dropping the day
 *   partitions older than the horizon, then deleting the mount's rows of the partial day row by row
 *   in the module's batches and pauses).
 *
 * Then a table and the extrapolation to 10^8 rows. Before generating it refuses when the estimate
 * would leave less than BENCH_EVENTS_MIN_FREE_GB (default 15) free on the database's disk.
 *
 * Environment: BENCH_EVENTS_ROWS (default 10000000), BENCH_EVENTS_DAYS (default 30),
 * BENCH_EVENTS_CONCURRENCY (default 32), BENCH_EVENTS_INSERT_SECONDS (default 5),
 * BENCH_EVENTS_MIN_FREE_GB (default 15), BENCH_PG_URL. Results go to stdout, progress to stderr.
 */
import { statfsSync } from 'node:fs';
import { DataSource, type Logger as TypeOrmLogger } from 'typeorm';
import { MCP_ENTITIES, MCP_MIGRATIONS, MCP_PARTITIONING_MIGRATIONS } from '../src/mcp';
import { McpAuditQuery } from '../src/mcp/console/mcp-audit-query.service';
import type { McpConsoleScope } from '../src/mcp/console/mcp-console.options';
import { McpEvent } from '../src/mcp/persistence/entities/mcp-event.entity';
import { McpInboundSession } from '../src/mcp/persistence/entities/inbound-session.entity';
import { McpTask } from '../src/mcp/persistence/entities/task.entity';
import type { McpEventInput } from '../src/mcp/persistence/interfaces/mcp-event-sink.interface';
import { EventPartitions } from '../src/mcp/persistence/retention/event-partitions';
import { RetentionPruner } from '../src/mcp/persistence/retention/retention-pruner';
import {
  DEFAULT_RETENTION_BATCH_PAUSE_MS,
  DEFAULT_RETENTION_BATCH_SIZE,
} from '../src/mcp/persistence/retention/mcp-retention.options';
import { TypeOrmEventSink } from '../src/mcp/persistence/typeorm/typeorm-event-sink.store';
import { runBench, type BenchCleanup } from './server/bench.cleanup';
import { createBenchDatabase } from './server/bench.database';
import { echoCallEvent } from './support/echo-event';
import { progress, positiveIntegerEnv } from './support/env';

const DAY_MS = 86_400_000;
/** Rows per INSERT ... SELECT statement (one transaction each). */
const CHUNK = 1_000_000;
/** Bytes per row assumed before measuring (docs/production/growth.md: ~625 with indexes), with a margin. */
const ESTIMATE_BYTES_PER_ROW = 700;
/** WAL and temporary room kept aside on top of the rows (max_wal_size is 1 GB by default). */
const ESTIMATE_SLACK_BYTES = 3 * 1024 ** 3;
const TARGET_ROWS = 100_000_000;

const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const count = (n: number) => Math.round(n).toLocaleString('en-US');

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

/** Records the SQL and parameters TypeORM sends, so that the console's queries can be explained as they ran. */
class CapturingLogger implements TypeOrmLogger {
  captured: { sql: string; params: unknown[]; at: number }[] = [];
  logQuery(query: string, parameters?: unknown[]): void {
    this.captured.push({ sql: query, params: parameters ?? [], at: Date.now() });
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}

/**
 * The generator: one INSERT ... SELECT over generate_series(from, to). Every choice comes from
 * `hashint8extended(g, k)` (deterministic, independent per k); rows g are in time order across
 * the window, ten sessions interleave in each stretch of 400 rows, each session keeps its mount,
 * principal and direction. The mix: 90% inbound (mounts default 70%, tools 20%, admin 10%), 10%
 * outbound (five servers); methods tools/call 70%, tools/list 8%, resources/read 5%, initialize 4%,
 * notifications/initialized 4%, ping 3%, prompts/get 2%, terminate (DELETE) 2%, other 2%; 2% of
 * statuses 4xx, 3% of tools/call results isError, 1% JSON-RPC errors; 2,000 principals.
 */
const GENERATE_SQL = `
INSERT INTO mcp_events ("id", "created_at", "direction", "mount", "server", "session_ref", "principal_key", "kind",
  "method", "protocol_version", "request", "response", "status", "error_code", "is_error", "duration_ms", "note", "trace_id")
SELECT gen_random_uuid()::text,
       $3::timestamp + (g::float8 / $4::float8) * ($5::float8 * interval '1 day') + (m % 997) * interval '1 millisecond',
       CASE WHEN out THEN 'outbound' ELSE 'inbound' END,
       CASE WHEN out THEN NULL WHEN (s / 100) % 10 < 7 THEN 'default' WHEN (s / 100) % 10 < 9 THEN 'tools' ELSE 'admin' END,
       CASE WHEN out THEN 'remote-' || ((s / 100) % 5) ELSE NULL END,
       md5('session' || sess)::uuid::text,
       CASE WHEN out THEN NULL ELSE 'user-' || ((s / 1000) % 2000) END,
       CASE WHEN method IS NULL THEN 'terminate' WHEN method LIKE 'notifications/%' THEN 'notification' ELSE 'request' END,
       method,
       CASE s % 3 WHEN 0 THEN '2025-11-25' WHEN 1 THEN '2025-06-18' ELSE '2026-07-28' END,
       CASE WHEN method IS NULL THEN NULL
            WHEN method = 'tools/call' THEN jsonb_build_object('jsonrpc', '2.0', 'id', g, 'method', method,
              'params', jsonb_build_object('name', CASE WHEN t < 80 THEN 'echo' WHEN t < 95 THEN 'add' ELSE 'search' END,
                'arguments', jsonb_build_object('text', 'hello ' || repeat('x', t::int))))
            ELSE jsonb_build_object('jsonrpc', '2.0', 'id', g, 'method', method) END,
       CASE WHEN method IS NULL OR method LIKE 'notifications/%' THEN NULL
            WHEN e < 10 THEN jsonb_build_object('jsonrpc', '2.0', 'id', g, 'error', jsonb_build_object('code', -32602, 'message', 'Invalid params'))
            WHEN method = 'tools/call' THEN jsonb_build_object('jsonrpc', '2.0', 'id', g, 'result', jsonb_build_object(
              'content', jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'hello ' || repeat('x', t::int))),
              'isError', e < 40))
            ELSE jsonb_build_object('jsonrpc', '2.0', 'id', g, 'result', '{}'::jsonb) END,
       CASE WHEN e >= 980 THEN 400 + (e % 5) WHEN method LIKE 'notifications/%' THEN 202 ELSE 200 END,
       CASE WHEN e < 10 AND method IS NOT NULL AND method NOT LIKE 'notifications/%' THEN -32602 END,
       coalesce(method = 'tools/call', false) AND e >= 10 AND e < 40,
       1 + (t * t) % 120,
       NULL,
       CASE WHEN t % 2 = 0 THEN md5('trace' || g) END
  FROM (
    SELECT g, sess, s, m, e, t, s % 100 < 10 AS out,
           CASE WHEN m < 70 THEN 'tools/call' WHEN m < 74 THEN 'initialize' WHEN m < 78 THEN 'notifications/initialized'
                WHEN m < 86 THEN 'tools/list' WHEN m < 91 THEN 'resources/read' WHEN m < 94 THEN 'ping'
                WHEN m < 96 THEN 'prompts/get' WHEN m < 98 THEN NULL ELSE 'completion/complete' END AS method
      FROM (
        SELECT g, sess,
               abs(hashint8extended(sess, 1)) AS s,
               abs(hashint8extended(g, 2)) % 100 AS m,
               abs(hashint8extended(g, 3)) % 1000 AS e,
               abs(hashint8extended(g, 4)) % 100 AS t
          FROM (SELECT g, (g / 400) * 10 + abs(hashint8extended(g, 5)) % 10 AS sess
                  FROM generate_series($1::bigint, $2::bigint) AS g) base
      ) picked
  ) chosen`;

/** One row as the app's echo calls write them, created now (today's partition). */
const liveEvent = (i: number): McpEventInput => echoCallEvent(i, `user-${i % 2000}`);

interface InsertResult {
  rows: number;
  seconds: number;
  p50: number;
  p99: number;
}

/** `concurrency` callers recording rows through the sink for `seconds`: rows/s and the latency of one `record`. */
async function measureInserts(sink: TypeOrmEventSink, concurrency: number, seconds: number): Promise<InsertResult> {
  const latencies: number[] = [];
  const until = Date.now() + seconds * 1000;
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        const at = process.hrtime.bigint();
        await sink.record(liveEvent(next++));
        latencies.push(Number(process.hrtime.bigint() - at) / 1e6);
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { rows: latencies.length, seconds: elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

interface PlanFacts {
  partitions: number;
  /** Rows the scans of mcp_events read (returned plus removed by a filter), over every loop. */
  rowsRead: number;
  removed: number;
  indexes: string[];
  seqScans: number;
  planMs: number;
  execMs: number;
}

/** Partitions scanned, subplans pruned at run time, indexes used and sequential scans of an EXPLAIN (FORMAT JSON) plan. */
function planFacts(explained: unknown): PlanFacts {
  const root = (explained as { 'QUERY PLAN': unknown[] }[])[0]['QUERY PLAN'][0] as Record<string, unknown>;
  const relations = new Set<string>();
  const indexes = new Set<string>();
  let removed = 0;
  let seqScans = 0;
  let rowsRead = 0;
  const walk = (node: Record<string, unknown>) => {
    const relation = node['Relation Name'] as string | undefined;
    const loops = Number(node['Actual Loops'] ?? 1);
    if (relation?.startsWith('mcp_events') && loops > 0) {
      relations.add(relation);
      rowsRead += (Number(node['Actual Rows'] ?? 0) + Number(node['Rows Removed by Filter'] ?? 0)) * loops;
    }
    const index = node['Index Name'] as string | undefined;
    if (index) indexes.add(index.replace(/^mcp_events_p\d{8}_/, '*_'));
    if (node['Node Type'] === 'Seq Scan' && relation?.startsWith('mcp_events')) seqScans++;
    removed += Number(node['Subplans Removed'] ?? 0);
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(root.Plan as Record<string, unknown>);
  return {
    partitions: relations.size,
    rowsRead,
    removed,
    indexes: [...indexes],
    seqScans,
    planMs: Number(root['Planning Time'] ?? 0),
    execMs: Number(root['Execution Time'] ?? 0),
  };
}

interface QueryTiming {
  name: string;
  medianMs: number;
  rows: number;
  plans: PlanFacts[];
}

async function main(cleanup: BenchCleanup): Promise<number> {
  const rowsWanted = positiveIntegerEnv('BENCH_EVENTS_ROWS', 10_000_000);
  const days = positiveIntegerEnv('BENCH_EVENTS_DAYS', 30);
  const concurrency = positiveIntegerEnv('BENCH_EVENTS_CONCURRENCY', 32);
  const insertSeconds = positiveIntegerEnv('BENCH_EVENTS_INSERT_SECONDS', 5);
  const minFreeBytes = positiveIntegerEnv('BENCH_EVENTS_MIN_FREE_GB', 15) * 1024 ** 3;
  const adminUrl =
    process.env.BENCH_PG_URL?.trim() || process.env.TEST_PG_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test';

  const db = await createBenchDatabase(adminUrl);
  cleanup.add(`drop database ${db.name}`, () => db.drop());
  progress(`database ${db.name} created`);
  const logger = new CapturingLogger();
  const ds = new DataSource({
    type: 'postgres',
    url: db.url,
    entities: MCP_ENTITIES,
    migrations: [...MCP_MIGRATIONS, ...MCP_PARTITIONING_MIGRATIONS],
    logging: ['query'],
    logger,
    extra: { max: 4 },
  });
  await ds.initialize();
  cleanup.add('close the DataSource', async () => void (await ds.destroy()));
  await ds.runMigrations();
  const one = async <T>(sql: string, params: unknown[] = []): Promise<T> => {
    const rows: T[] = await ds.query(sql, params);
    return rows[0];
  };

  // The disk: free space where the server keeps its data (the bench's own filesystem when that is not readable).
  const dataDirectory = (await one<{ d: string }>('SHOW data_directory')).d;
  let where = dataDirectory;
  let free: number;
  try {
    const stat = statfsSync(dataDirectory);
    free = stat.bavail * stat.bsize;
  } catch {
    where = process.cwd();
    const stat = statfsSync(where);
    free = stat.bavail * stat.bsize;
  }
  const estimate = rowsWanted * ESTIMATE_BYTES_PER_ROW + ESTIMATE_SLACK_BYTES;
  progress(`free on ${where}: ${gib(free)}; the run needs about ${gib(estimate)}`);
  if (free - estimate < minFreeBytes) {
    console.error(
      `bench:events refuses: ${count(rowsWanted)} rows need about ${gib(estimate)} and would leave ${gib(free - estimate)} free ` +
        `on ${where}, under BENCH_EVENTS_MIN_FREE_GB (${gib(minFreeBytes)}). Lower BENCH_EVENTS_ROWS.`,
    );
    return 2;
  }

  // Day partitions for the window, made by the pruner's own code (it creates three days from a date on).
  const now = new Date();
  // The driver writes created_at in the process's local time: days are local days.
  const todayStart = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  const windowStart = new Date(todayStart.getTime() - days * DAY_MS);
  const partitions = new EventPartitions(ds);
  const runner = ds.createQueryRunner();
  for (let day = 0; day <= days; day += 3)
    await partitions.createAhead(runner, new Date(windowStart.getTime() + day * DAY_MS));
  await partitions.createAhead(runner, now);
  const partitionCount = (await partitions.days(runner)).size;
  await runner.release();

  // 1. The audit path on the empty table.
  const sink = new TypeOrmEventSink(ds.getRepository(McpEvent), {
    mount: 'default',
    idleTtlMs: 3_600_000,
    databaseTimeoutMs: 30_000,
  });
  await measureInserts(sink, concurrency, 3);
  const emptyInsert = await measureInserts(sink, concurrency, insertSeconds);
  progress(`empty table: ${count(emptyInsert.rows / emptyInsert.seconds)} rows/s through the sink`);
  await ds.query('TRUNCATE mcp_events');

  // 2. Generation, in chunks, rows in time order over the window (the window ends at today's start: today stays for the live rows).
  const walBefore = (await one<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).lsn;
  const generated = Date.now();
  for (let done = 0; done < rowsWanted; done += CHUNK) {
    const n = Math.min(CHUNK, rowsWanted - done);
    await ds.query(GENERATE_SQL, [done, done + n - 1, windowStart, rowsWanted, days]);
    progress(`  ${count(done + n)} of ${count(rowsWanted)} rows (${secs(Date.now() - generated)})`);
  }
  const generateMs = Date.now() - generated;
  const vacuumed = Date.now();
  await ds.query('VACUUM ANALYZE mcp_events');
  const vacuumMs = Date.now() - vacuumed;
  const walBytes = Number(
    (await one<{ n: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint AS n', [walBefore])).n,
  );
  const sizes = await one<{ total: string; heap: string; toast: string; indexes: string; rows: string }>(
    `SELECT sum(pg_total_relation_size(i.inhrelid))::bigint AS total, sum(pg_relation_size(i.inhrelid))::bigint AS heap,
            sum(pg_table_size(i.inhrelid) - pg_relation_size(i.inhrelid))::bigint AS toast,
            sum(pg_indexes_size(i.inhrelid))::bigint AS indexes, (SELECT count(*) FROM mcp_events)::bigint AS rows
       FROM pg_inherits i WHERE i.inhparent = 'mcp_events'::regclass`,
  );
  const totalRows = Number(sizes.rows);
  const totalBytes = Number(sizes.total);
  const bytesPerRow = totalBytes / totalRows;
  const largest = await one<{ name: string; bytes: string; rows: string }>(
    `SELECT c.relname AS name, pg_total_relation_size(c.oid)::bigint AS bytes, c.reltuples::bigint AS rows
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'mcp_events'::regclass
      ORDER BY pg_total_relation_size(c.oid) DESC LIMIT 1`,
  );
  progress(
    `${count(totalRows)} rows in ${secs(generateMs)} (+ VACUUM ANALYZE ${secs(vacuumMs)}): ${mib(totalBytes)}, ${bytesPerRow.toFixed(0)} bytes per row, WAL ${mib(walBytes)}`,
  );

  // 3. The audit path at size.
  await measureInserts(sink, concurrency, 3);
  const fullInsert = await measureInserts(sink, concurrency, insertSeconds);
  progress(`at size: ${count(fullInsert.rows / fullInsert.seconds)} rows/s through the sink`);
  await sink.beforeApplicationShutdown();
  // Today's partition got the live rows: statistics as autovacuum would soon give them.
  await ds.query('ANALYZE mcp_events');

  // 4. The console's queries, as McpAuditQuery sends them.
  const sample = await one<{ id: string; created_at: Date; principal_key: string }>(
    `SELECT id, created_at, principal_key FROM mcp_events WHERE principal_key IS NOT NULL AND created_at < $1 ORDER BY created_at DESC LIMIT 1 OFFSET 5000`,
    [todayStart],
  );
  const options = (mount: string | null) => ({ mount, pageSize: 50, idleTtlMs: 3_600_000, timeoutMs: 600_000 });
  const all = new McpAuditQuery(
    ds.getRepository(McpEvent),
    ds.getRepository(McpInboundSession),
    ds.getRepository(McpTask),
    options(null),
  );
  const mounted = new McpAuditQuery(
    ds.getRepository(McpEvent),
    ds.getRepository(McpInboundSession),
    ds.getRepository(McpTask),
    options('default'),
  );
  const firstPage = await all.eventPage({}, null);
  const oneDayFrom = new Date(windowStart.getTime() + Math.floor(days / 2) * DAY_MS);
  const scoped: McpConsoleScope = { principalKeys: [sample.principal_key] };
  const queries: Array<[string, () => Promise<unknown>]> = [
    ['events, first page', () => all.eventPage({}, null)],
    ['events, next page (cursor)', () => all.eventPage({}, firstPage.next)],
    ['events of one mount', () => mounted.eventPage({}, null)],
    ['events, method tools/call', () => all.eventPage({ method: 'tools/call' }, null)],
    ['events, tool echo', () => all.eventPage({ tool: 'echo' }, null)],
    ['events, status error', () => all.eventPage({ status: 'error' }, null)],
    ['events, one principal', () => all.eventPage({ principal: sample.principal_key }, null)],
    ['events, scoped console (1 principal)', () => all.eventPage({}, null, scoped)],
    ['events, unknown principal', () => all.eventPage({ principal: 'nobody' }, null)],
    [
      'events, one day (from/to)',
      () => all.eventPage({ from: oneDayFrom, to: new Date(oneDayFrom.getTime() + DAY_MS) }, null),
    ],
    ['event by id', () => all.event(sample.id)],
    ['chart (last hour)', () => all.throughput()],
    ['sessions page', () => all.sessionPage(null)],
    ['tasks page', () => all.taskPage(null)],
  ];
  const timings: QueryTiming[] = [];
  for (const [name, run] of queries) {
    const times: number[] = [];
    let rows = 0;
    let sent: { sql: string; params: unknown[] }[] = [];
    for (let i = 0; i < 3; i++) {
      logger.captured = [];
      const at = process.hrtime.bigint();
      const result = await run();
      times.push(Number(process.hrtime.bigint() - at) / 1e6);
      sent = logger.captured.filter((q) => /^\s*SELECT/i.test(q.sql));
      const value = result as { rows?: unknown[] } | null;
      rows = Array.isArray(value?.rows) ? value.rows.length : value ? 1 : 0;
    }
    const plans: PlanFacts[] = [];
    for (const query of sent)
      plans.push(planFacts(await ds.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${query.sql}`, query.params)));
    times.sort((a, b) => a - b);
    timings.push({ name, medianMs: times[1], rows, plans });
    progress(`  ${name}: ${times[1].toFixed(1)} ms`);
  }

  // 5. The pruner of mount "default": the horizon half a day into the window's middle day.
  const horizon = new Date(windowStart.getTime() + Math.floor(days / 2) * DAY_MS + DAY_MS / 2);
  const partitionRows = await one<{ n: string }>(`SELECT count(*)::bigint AS n FROM mcp_events WHERE created_at < $1`, [
    new Date(windowStart.getTime() + Math.floor(days / 2) * DAY_MS),
  ]);
  const batchRows = await one<{ n: string }>(
    `SELECT count(*)::bigint AS n FROM mcp_events WHERE created_at >= $1 AND created_at < $2 AND direction = 'inbound' AND mount = 'default'`,
    [new Date(windowStart.getTime() + Math.floor(days / 2) * DAY_MS), horizon],
  );
  const retention = {
    events: now.getTime() - horizon.getTime(),
    sessions: null,
    tasks: null,
    outboundSessions: null,
    intervalMs: 3_600_000,
    batchSize: DEFAULT_RETENTION_BATCH_SIZE,
    batchPauseMs: DEFAULT_RETENTION_BATCH_PAUSE_MS,
  };
  const pruner = new RetentionPruner(ds, { kind: 'mount', mount: 'default', idleTtlMs: 3_600_000 }, retention);
  logger.captured = [];
  const pruneStarted = Date.now();
  const report = await pruner.run(now);
  const pruneEnded = Date.now();
  const deleted = report.tables.mcp_events ?? { rows: 0, batches: 0 };
  // The two parts of the run, told apart by the statements it sent: the drops, then the batches.
  const firstDrop = logger.captured.find((q) => /^DROP TABLE/i.test(q.sql))?.at;
  const firstDelete = logger.captured.find((q) => /^DELETE FROM/i.test(q.sql))?.at ?? pruneEnded;
  const dropPhaseMs = firstDrop === undefined ? 0 : firstDelete - firstDrop;
  const deletePhaseMs = pruneEnded - firstDelete;
  const left = await one<{ n: string }>('SELECT count(*)::bigint AS n FROM mcp_events');
  progress(
    `pruner: ${report.partitionsDropped.length} partitions dropped, ${count(deleted.rows)} rows deleted, ${secs(pruneEnded - pruneStarted)}`,
  );

  // 6. The report.
  const rate = (r: InsertResult) => r.rows / r.seconds;
  console.log(
    `\nbench:events  ${count(totalRows)} mcp_events rows over ${days} day partitions (${partitionCount} partitions with the days ahead), node ${process.version}, PostgreSQL ${(await one<{ server_version: string }>('SHOW server_version')).server_version}`,
  );
  console.log('the times below share the machine with whatever else runs on it: compare them within one run');
  console.log(`| what | value |`);
  console.log(`| --- | --- |`);
  console.log(
    `| generation (INSERT ... SELECT generate_series, ${count(CHUNK)} rows a statement) | ${secs(generateMs)}, ${count(totalRows / (generateMs / 1000))} rows/s; VACUUM ANALYZE ${secs(vacuumMs)} |`,
  );
  console.log(
    `| size of the partitions (heap + TOAST + indexes) | ${gib(totalBytes)}: heap ${gib(Number(sizes.heap))}, TOAST ${mib(Number(sizes.toast))}, indexes ${gib(Number(sizes.indexes))} |`,
  );
  console.log(`| bytes per row (with indexes) | ${bytesPerRow.toFixed(0)} |`);
  console.log(
    `| largest day partition | ${largest.name}: ${mib(Number(largest.bytes))}, ${count(Number(largest.rows))} rows |`,
  );
  console.log(
    `| WAL written during generation (whole server) | ${gib(walBytes)} (${(walBytes / totalRows).toFixed(0)} bytes per row) |`,
  );
  for (const [label, r] of [
    ['empty table', emptyInsert],
    [`at ${count(totalRows)} rows`, fullInsert],
  ] as const)
    console.log(
      `| audit insert, ${label} (sink, c=${concurrency}) | ${count(rate(r))} rows/s, record p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms |`,
    );
  for (const t of timings) {
    const plan = t.plans
      .map(
        (p) =>
          `${p.partitions} partition(s) opened, ${count(p.rowsRead)} rows read${p.removed ? `, ${p.removed} pruned at run time` : ''}, ${p.indexes.length ? `index ${p.indexes.join(', ')}` : 'no index'}${p.seqScans ? `, ${p.seqScans} seq scan(s)` : ''}, exec ${p.execMs.toFixed(1)} ms`,
      )
      .join('; ');
    console.log(`| console: ${t.name} | ${t.medianMs.toFixed(1)} ms, ${t.rows} row(s); ${plan} |`);
  }
  console.log(
    `| pruner, partition mode (mount default, horizon mid-day) | ${secs(report.durationMs)} in all: ${report.partitionsDropped.length} day partitions dropped in ${secs(dropPhaseMs)} (${count(Number(partitionRows.n))} rows, ${count(Number(partitionRows.n) / Math.max(0.001, dropPhaseMs / 1000))} rows/s); ` +
      `then ${count(deleted.rows)} of ${count(Number(batchRows.n))} rows of the partial day deleted in ${secs(deletePhaseMs)}, ${deleted.batches} batches of ${DEFAULT_RETENTION_BATCH_SIZE} (${count(deleted.rows / Math.max(0.001, deletePhaseMs / 1000))} rows/s, the module's pauses included) |`,
  );
  console.log(`| rows left | ${count(Number(left.n))} |`);

  const factor = TARGET_ROWS / totalRows;
  console.log(
    `\nextrapolation to ${count(TARGET_ROWS)} rows (x${factor.toFixed(0)}; model: size and generation time linear in rows, ` +
      `the per-day partitions' indexes grow with the rows of a day, not of the table): ` +
      `disk ${gib(totalBytes * factor)} + WAL ${gib(walBytes * factor)} written (recycled at checkpoints), generation ${secs(generateMs * factor)} + VACUUM ${secs(vacuumMs * factor)}; ` +
      `unchanged with size: the insert rate (today's partition only), the pages that walk created_at newest first or name a day, the chart, a partition drop; ` +
      `growing with the partitions (not the rows): event by id (one probe per partition); ` +
      `growing with the rows: a filter that matches nothing recent (it walks back through every partition), the batch delete of a partial day (rows of a day).`,
  );
  return 0;
}

runBench('bench:events', main, 'stack');
