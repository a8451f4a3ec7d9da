/**
 * Audit-row benchmark (`npm run bench:audit`): inserts event rows through the group committer at
 * concurrency 1 and 32, in each insert form, and prints rows/s and the CPU the PostgreSQL
 * backends serving the bench database spent per row (utime + stime from /proc, so run it where
 * those processes are readable: as root, or as the postgres user). Forms:
 *
 * - TypeORM `Repository.insert` of each batch (what the query builder costs),
 * - one multi-row VALUES statement per batch (the text changes with the batch size; the form the
 *   sink used before the array insert),
 * - the sink: one prepared INSERT ... SELECT FROM unnest(arrays), `audit.commit` 'sync',
 * - the sink with `audit.commit` 'async' (synchronous_commit off for each batch's transaction).
 *
 * Needs PostgreSQL (TEST_PG_URL, default postgres://postgres@127.0.0.1:5432/test); rows per run
 * from BENCH_AUDIT_ROWS (default 4000). Each later form is printed with its ratios to the TypeORM
 * and VALUES forms of the same run.
 */
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import type { Repository } from 'typeorm';
import { McpEvent } from '../src/mcp/stores';
import { GroupCommitter } from '../src/mcp/persistence/group-committer';
import type { McpEventInput } from '../src/mcp/persistence/interfaces/mcp-event-sink.interface';
import { newEventRecord } from '../src/mcp/persistence/new-records';
import { EntitySql } from '../src/mcp/persistence/typeorm/entity-sql';
import { TypeOrmEventSink } from '../src/mcp/persistence/typeorm/typeorm-event-sink.store';
import { echoCallEvent } from './support/echo-event';
import { createTestDatabase, PG_ADMIN_URL } from '../test/support/postgres';

const ROWS = Number(process.env.BENCH_AUDIT_ROWS ?? 4000);
const TICKS_PER_SECOND = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;

/** A row like the one a `tools/call` of `echo` leaves. */
const event = (i: number): McpEventInput => echoCallEvent(i, 'alice');

/** CPU ticks (user + system) a process has used, or null when it is gone or unreadable. */
function ticksOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/** Reads the CPU of the backends of one database (pids from pg_stat_activity) and of the WAL writer. */
class PostgresCpu {
  constructor(
    private readonly admin: Client,
    private readonly database: string,
  ) {}

  async snapshot(): Promise<{ backends: Map<number, number>; walwriter: number }> {
    const { rows } = await this.admin.query<{ pid: number; kind: string }>(
      `SELECT pid, CASE WHEN backend_type = 'walwriter' THEN 'walwriter' ELSE 'backend' END AS kind
         FROM pg_stat_activity WHERE datname = $1 OR backend_type = 'walwriter'`,
      [this.database],
    );
    const backends = new Map<number, number>();
    let walwriter = 0;
    for (const { pid, kind } of rows) {
      const ticks = ticksOf(pid);
      if (ticks === null) continue;
      if (kind === 'walwriter') walwriter += ticks;
      else backends.set(pid, ticks);
    }
    return { backends, walwriter };
  }
}

interface Result {
  rowsPerSecond: number;
  backendUsPerRow: number;
  walwriterUsPerRow: number;
}

async function measure(
  cpu: PostgresCpu,
  submit: (row: McpEventInput) => Promise<void>,
  concurrency: number,
): Promise<Result> {
  // Warm-up: opens the pool's connections and prepares the statements.
  await Promise.all(Array.from({ length: 200 }, (_, i) => submit(event(i))));
  const before = await cpu.snapshot();
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ROWS) await submit(event(next++));
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const after = await cpu.snapshot();
  let backendTicks = 0;
  for (const [pid, ticks] of after.backends) backendTicks += ticks - (before.backends.get(pid) ?? 0);
  const usPerTick = 1e6 / TICKS_PER_SECOND;
  return {
    rowsPerSecond: ROWS / seconds,
    backendUsPerRow: (backendTicks * usPerTick) / ROWS,
    walwriterUsPerRow: ((after.walwriter - before.walwriter) * usPerTick) / ROWS,
  };
}

/** `xA rows/s, xB CPU/row vs <name>` of a result against an earlier form of the same run. */
function ratio(result: Result, against: Result, name: string): string {
  return `x${(result.rowsPerSecond / against.rowsPerSecond).toFixed(2)} rows/s, x${(result.backendUsPerRow / against.backendUsPerRow).toFixed(2)} CPU/row vs ${name}`;
}

function line(label: string, result: Result, earlier: Result[]): string {
  const [typeorm, values] = earlier;
  const ratios = [typeorm ? ratio(result, typeorm, 'TypeORM') : '', values ? ratio(result, values, 'VALUES') : '']
    .filter(Boolean)
    .join('; ');
  return `${label.padEnd(40)} ${result.rowsPerSecond.toFixed(0).padStart(7)} rows/s   backends ${result.backendUsPerRow.toFixed(1).padStart(6)} µs/row   walwriter ${result.walwriterUsPerRow.toFixed(1).padStart(5)} µs/row${ratios ? `   ${ratios}` : ''}`;
}

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const admin = new Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    const repository: Repository<McpEvent> = db.dataSource.getRepository(McpEvent);
    const sql = new EntitySql(db.dataSource, McpEvent);
    const committed = (flush: (rows: McpEvent[]) => Promise<unknown>) => {
      const committer = new GroupCommitter<McpEvent, void>(async (rows) => {
        await flush(rows);
        return rows.map(() => undefined);
      });
      return (row: McpEventInput) => committer.submit(newEventRecord(row));
    };
    const sink = (auditCommit: 'sync' | 'async') => {
      const events = new TypeOrmEventSink(repository, { mount: 'default', idleTtlMs: 60_000, auditCommit });
      return (row: McpEventInput) => events.record(row);
    };
    const forms: [string, (row: McpEventInput) => Promise<void>][] = [
      ['TypeORM Repository.insert per batch', committed((rows) => repository.insert(rows as never))],
      ['multi-row VALUES per batch', committed((rows) => sql.insertValues(rows))],
      ["sink, unnest prepared, commit 'sync'", sink('sync')],
      ["sink, unnest prepared, commit 'async'", sink('async')],
    ];
    const cpu = new PostgresCpu(admin, db.name);
    console.log(
      `== ${ROWS} mcp_events rows through the group committer, PostgreSQL ${String((await admin.query('SHOW server_version')).rows[0].server_version)} ==`,
    );
    console.log('   (walwriter: the server-wide WAL writer, shared with any other database on the server)');
    for (const concurrency of [1, 32]) {
      console.log(`-- concurrency ${concurrency} --`);
      const earlier: Result[] = [];
      for (const [label, submit] of forms) {
        const result = await measure(cpu, submit, concurrency);
        console.log(line(label, result, earlier));
        earlier.push(result);
      }
    }
  } finally {
    await admin.end();
    await db.drop();
  }
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
