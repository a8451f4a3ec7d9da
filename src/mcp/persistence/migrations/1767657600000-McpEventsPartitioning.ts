import type { MigrationInterface, QueryRunner } from 'typeorm';

/** How many past days of existing rows get a day partition of their own; older rows go to the default partition. */
const BACKFILL_DAYS = 90;
/** Day partitions created ahead of today (today included); the pruner keeps creating them. */
const DAYS_AHEAD = 3;

/** The definitions of the indexes of `table` other than its primary key, as `CREATE INDEX` statements. */
async function secondaryIndexes(
  queryRunner: QueryRunner,
  table: string,
): Promise<{ name: string; definition: string }[]> {
  const rows = (await queryRunner.query(
    `SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = to_regclass($1) AND NOT i.indisprimary ORDER BY c.relname`,
    [table],
  )) as { name: string; definition: string }[];
  return rows.map((row) => ({ name: row.name, definition: row.definition.replace(' ON ONLY ', ' ON ') }));
}

async function primaryKeyName(queryRunner: QueryRunner, table: string): Promise<string | null> {
  const rows = (await queryRunner.query(
    `SELECT conname AS name FROM pg_constraint WHERE conrelid = to_regclass($1) AND contype = 'p'`,
    [table],
  )) as { name: string }[];
  return rows[0]?.name ?? null;
}

async function isPartitioned(queryRunner: QueryRunner): Promise<boolean> {
  const rows = (await queryRunner.query(
    `SELECT relkind AS kind FROM pg_class WHERE oid = to_regclass('mcp_events')`,
  )) as { kind: string }[];
  return rows[0]?.kind === 'p';
}

/**
 * Moves `mcp_events` aside under `aside`, renaming its primary key and indexes so that the new
 * table can take their names; returns the index definitions to recreate on the new table.
 */
async function setAside(queryRunner: QueryRunner, aside: string): Promise<{ name: string; definition: string }[]> {
  const indexes = await secondaryIndexes(queryRunner, 'mcp_events');
  const pkey = await primaryKeyName(queryRunner, 'mcp_events');
  await queryRunner.query(`ALTER TABLE "mcp_events" RENAME TO "${aside}"`);
  if (pkey) await queryRunner.query(`ALTER TABLE "${aside}" RENAME CONSTRAINT "${pkey}" TO "${aside}_pkey"`);
  for (const index of indexes)
    await queryRunner.query(
      `ALTER INDEX "${index.name}" RENAME TO "${aside}_${index.name.replace(/^mcp_events_/, '')}"`,
    );
  return indexes;
}

/**
 * Optional, PostgreSQL only: turns `mcp_events` into a table partitioned by day on `created_at`
 * (`mcp_events_pYYYYMMDD`, plus `mcp_events_default` for rows outside every day partition), so
 * the retention pruner drops whole days instead of deleting rows. Not in `MCP_MIGRATIONS`: add
 * `MCP_PARTITIONING_MIGRATIONS` after them. The columns are copied as they are (whatever later
 * migrations added); the primary key becomes (`id`, `created_at`), since a partitioned table's
 * keys must hold the partition key. Existing rows are copied into the new table, inside the
 * migration's transaction: on a large table, run it in a maintenance window.
 */
export class McpEventsPartitioning1767657600000 implements MigrationInterface {
  /** @inheritdoc */
  name = 'McpEventsPartitioning1767657600000';

  /** @inheritdoc */
  async up(queryRunner: QueryRunner): Promise<void> {
    if (await isPartitioned(queryRunner)) return;
    const indexes = await setAside(queryRunner, 'mcp_events_unpartitioned');
    await queryRunner.query(
      `CREATE TABLE "mcp_events" (LIKE "mcp_events_unpartitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING COMMENTS) PARTITION BY RANGE ("created_at")`,
    );
    await queryRunner.query(
      `ALTER TABLE "mcp_events" ADD CONSTRAINT "mcp_events_pkey" PRIMARY KEY ("id", "created_at")`,
    );
    for (const index of indexes) await queryRunner.query(index.definition);
    await queryRunner.query(`CREATE TABLE "mcp_events_default" PARTITION OF "mcp_events" DEFAULT`);
    const days = (await queryRunner.query(
      `SELECT to_char(d, 'YYYYMMDD') AS day, to_char(d, 'YYYY-MM-DD') AS lower, to_char(d + interval '1 day', 'YYYY-MM-DD') AS upper
         FROM generate_series(
           GREATEST(date_trunc('day', (SELECT min("created_at") FROM "mcp_events_unpartitioned")), date_trunc('day', LOCALTIMESTAMP) - $1::int * interval '1 day'),
           date_trunc('day', LOCALTIMESTAMP) + ($2::int - 1) * interval '1 day',
           interval '1 day') AS d`,
      [BACKFILL_DAYS, DAYS_AHEAD],
    )) as { day: string; lower: string; upper: string }[];
    // With an empty table min() is null and GREATEST ignores it: the series starts BACKFILL_DAYS back; keep only today on.
    const hasRows = (
      (await queryRunner.query(`SELECT EXISTS (SELECT 1 FROM "mcp_events_unpartitioned") AS any`)) as { any: boolean }[]
    )[0].any;
    const today: string = (
      (await queryRunner.query(`SELECT to_char(LOCALTIMESTAMP, 'YYYYMMDD') AS day`)) as { day: string }[]
    )[0].day;
    for (const { day, lower, upper } of days) {
      if (!hasRows && day < today) continue;
      await queryRunner.query(
        `CREATE TABLE "mcp_events_p${day}" PARTITION OF "mcp_events" FOR VALUES FROM ('${lower}') TO ('${upper}')`,
      );
    }
    await queryRunner.query(`INSERT INTO "mcp_events" SELECT * FROM "mcp_events_unpartitioned"`);
    await queryRunner.query(`DROP TABLE "mcp_events_unpartitioned"`);
  }

  /** @inheritdoc */
  async down(queryRunner: QueryRunner): Promise<void> {
    if (!(await isPartitioned(queryRunner))) return;
    const indexes = await setAside(queryRunner, 'mcp_events_partitioned');
    await queryRunner.query(
      `CREATE TABLE "mcp_events" (LIKE "mcp_events_partitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED INCLUDING COMMENTS)`,
    );
    await queryRunner.query(`ALTER TABLE "mcp_events" ADD CONSTRAINT "mcp_events_pkey" PRIMARY KEY ("id")`);
    for (const index of indexes) await queryRunner.query(index.definition);
    await queryRunner.query(`INSERT INTO "mcp_events" SELECT * FROM "mcp_events_partitioned"`);
    await queryRunner.query(`DROP TABLE "mcp_events_partitioned" CASCADE`);
  }
}
