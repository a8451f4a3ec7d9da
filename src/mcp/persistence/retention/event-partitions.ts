import type { DataSource, QueryRunner } from 'typeorm';
import { McpEvent } from '../entities/mcp-event.entity';

/** How many day partitions ahead of today the pruner keeps created (today included). */
export const PARTITION_DAYS_AHEAD = 3;

/** The name of the day partition of `table` for a `YYYYMMDD` day. */
export function dayPartitionName(table: string, day: string): string {
  return `${table}_p${day}`;
}

/**
 * The partition mode of `mcp_events` on PostgreSQL (after the optional `McpEventsPartitioning`
 * migration): one partition per day (`mcp_events_pYYYYMMDD`, range on `created_at`) plus a
 * default one. The pruner creates the coming days ahead and drops each day wholly older than the
 * horizon, which costs a catalog change instead of a delete per row.
 */
export class EventPartitions {
  private readonly schema: string | undefined;
  private readonly table: string;

  constructor(private readonly dataSource: DataSource) {
    const metadata = dataSource.getMetadata(McpEvent);
    const parts = metadata.tablePath.split('.');
    this.table = parts.pop() as string;
    this.schema = parts.pop();
  }

  private escaped(name: string): string {
    const driver = this.dataSource.driver;
    return this.schema ? `${driver.escape(this.schema)}.${driver.escape(name)}` : driver.escape(name);
  }

  /** Whether `mcp_events` is a partitioned table. */
  async isPartitioned(runner: QueryRunner): Promise<boolean> {
    const rows = (await runner.query(`SELECT c.relkind AS kind FROM pg_class c WHERE c.oid = to_regclass($1)`, [
      this.escaped(this.table),
    ])) as { kind: string }[];
    return rows[0]?.kind === 'p';
  }

  /** The day partitions there are, by `YYYYMMDD` day. */
  async days(runner: QueryRunner): Promise<Map<string, string>> {
    const rows = (await runner.query(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass($1)`,
      [this.escaped(this.table)],
    )) as { name: string }[];
    const prefix = `${this.table}_p`;
    const days = new Map<string, string>();
    for (const { name } of rows) {
      const day = name.startsWith(prefix) ? name.slice(prefix.length) : '';
      if (/^\d{8}$/.test(day)) days.set(day, name);
    }
    return days;
  }

  /**
   * Creates the partitions of the days from `now` to `PARTITION_DAYS_AHEAD - 1` days later that
   * are missing, except a day whose rows already landed in the default partition; returns their names.
   */
  async createAhead(runner: QueryRunner, now: Date): Promise<string[]> {
    const existing = await this.days(runner);
    const created: string[] = [];
    const column = this.dataSource.getMetadata(McpEvent).findColumnWithPropertyName('createdAt');
    const at: unknown = column ? this.dataSource.driver.preparePersistentValue(now, column) : now;
    const wanted = (await runner.query(
      `SELECT to_char(d, 'YYYYMMDD') AS day, to_char(d, 'YYYY-MM-DD') AS lower, to_char(d + interval '1 day', 'YYYY-MM-DD') AS upper
         FROM generate_series(date_trunc('day', $1::timestamp), date_trunc('day', $1::timestamp) + ($2::int - 1) * interval '1 day', interval '1 day') AS d`,
      [at, PARTITION_DAYS_AHEAD],
    )) as { day: string; lower: string; upper: string }[];
    for (const { day, lower, upper } of wanted) {
      if (existing.has(day)) continue;
      const name = dayPartitionName(this.table, day);
      try {
        await runner.query(
          `CREATE TABLE IF NOT EXISTS ${this.escaped(name)} PARTITION OF ${this.escaped(this.table)} FOR VALUES FROM ('${lower}') TO ('${upper}')`,
        );
      } catch (error) {
        // Rows of that day already sit in the default partition (no run for days): they stay there, pruned by batches.
        if ((error as { driverError?: { code?: string } }).driverError?.code === '23514') continue;
        throw error;
      }
      created.push(name);
    }
    return created;
  }

  /**
   * Drops the day partitions that end at or before the start of the horizon's day (every row
   * in them is older than the horizon); returns the names dropped. Dropping a partition takes a
   * brief exclusive lock on `mcp_events` (PostgreSQL refuses `DETACH ... CONCURRENTLY` beside a
   * default partition): each drop is its own transaction with a `lock_timeout` of
   * `lockTimeoutMs`, so inserts queue behind it for that long at most; a drop that times out is
   * left for the next run.
   */
  async dropBefore(runner: QueryRunner, horizon: Date, lockTimeoutMs = 500): Promise<string[]> {
    const column = this.dataSource.getMetadata(McpEvent).findColumnWithPropertyName('createdAt');
    const at: unknown = column ? this.dataSource.driver.preparePersistentValue(horizon, column) : horizon;
    const rows = (await runner.query(`SELECT to_char($1::timestamp, 'YYYYMMDD') AS day`, [at])) as { day: string }[];
    const horizonDay = rows[0].day;
    const dropped: string[] = [];
    const days = [...(await this.days(runner)).entries()].sort(([a], [b]) => a.localeCompare(b));
    for (const [day, name] of days) {
      // A partition covers [day, day + 1): wholly older than the horizon when day + 1 <= the horizon's day start.
      if (day >= horizonDay) break;
      await runner.startTransaction();
      try {
        await runner.query(`SELECT set_config('lock_timeout', $1, true)`, [`${lockTimeoutMs}ms`]);
        await runner.query(`DROP TABLE ${this.escaped(name)}`);
        await runner.commitTransaction();
      } catch (error) {
        await runner.rollbackTransaction();
        if ((error as { driverError?: { code?: string }; code?: string }).driverError?.code === '55P03') break;
        throw error;
      }
      dropped.push(name);
    }
    return dropped;
  }
}
