import { createHash } from 'node:crypto';
import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { JsonText } from '../json-text';

/** The part of a `pg` pool this class uses. */
interface PgPool {
  query(
    sql: string | { name: string; text: string; values: unknown[] },
    params?: unknown[],
  ): Promise<{ rows: Record<string, unknown>[] }>;
  query(query: PgQuery, params: undefined, callback: (error: Error | undefined) => void): void;
}

/** A `pg` query object (a submittable): the pool runs it as it is. */
interface PgQuery {
  name?: string;
}

/** `pg`'s `Query` class, as the driver loaded it. */
type PgQueryClass = new (text: string, values: unknown[]) => PgQuery;

/**
 * How the transaction of a batch insert commits. `async` commits with PostgreSQL's
 * `synchronous_commit` off for that transaction only: the row is committed and visible, its WAL
 * flush is left to the WAL writer. Other databases commit as usual either way.
 */
export type McpCommitMode = 'sync' | 'async';

/**
 * Column types whose values PostgreSQL's TypeORM driver passes to `pg` as they are (no date,
 * JSON, enum or spatial conversion): the array insert hands them over without calling it.
 */
const PASS_THROUGH_TYPES = new Set([
  'varchar',
  'character varying',
  'text',
  'integer',
  'int',
  'int4',
  'smallint',
  'bigint',
  'boolean',
  'bool',
  'uuid',
]);

/** What turns `synchronous_commit` off for the statement's own (implicit) transaction: the function form of `SET LOCAL`. */
const ASYNC_COMMIT_FILTER = ` WHERE (SELECT set_config('synchronous_commit', 'off', true)) = 'off'`;

/** A named statement: `pg` parses and plans it once per connection. */
interface PreparedStatement {
  name: string;
  text: string;
}

/**
 * The escaped name of a table as TypeORM resolved it: `entityPrefix` is already part of the
 * table name, and `schema` (or `database`) of the host's DataSource comes first, `"mcp"."app_x"`.
 * Hand-built statements must use this, not the bare entity name.
 */
export function escapeTablePath(dataSource: DataSource, tablePath: string): string {
  return tablePath
    .split('.')
    .map((part) => dataSource.driver.escape(part))
    .join('.');
}

/** The escaped table of an entity, schema and prefix included. */
export function escapedTableOf(dataSource: DataSource, entity: EntityTarget<ObjectLiteral>): string {
  return escapeTablePath(dataSource, dataSource.getMetadata(entity).tablePath);
}

/**
 * Hand-built SQL for the hot path of one entity (multi-row INSERT, SELECT by a key list). The
 * statements are written once; values still go through the driver's own conversions, so the
 * same code serves PostgreSQL and SQLite. Building these with the query builder cost more CPU per
 * request than everything else the endpoint does.
 */
export class EntitySql<T extends ObjectLiteral> {
  private readonly columns: ColumnMetadata[];
  private readonly table: string;
  private readonly selectList: string;
  private readonly numbered: boolean;
  private readonly insertHead: string;
  /**
   * PostgreSQL, per commit mode: `many`, one INSERT ... SELECT FROM unnest(arrays), prepared once
   * per connection whatever the batch size; `one`, the same insert of a single row from one
   * parameter per column (a lone caller's batch), which spares the arrays and the unnest.
   */
  private readonly arrayInserts: Record<McpCommitMode, { many: PreparedStatement; one: PreparedStatement }> | null;
  /**
   * By column: true when PostgreSQL's driver hands its values over unchanged (a plain type, no
   * transformer), so the array insert skips the driver's conversion call for them.
   */
  private readonly passThrough: boolean[];
  /** `pg`'s `Query` class as the driver loaded it (undefined for a driver without one). */
  private readonly queryClass: PgQueryClass | undefined;
  private readonly wrapRead: (column: ColumnMetadata) => string;
  private readonly wrapWrite: (mark: string, column: ColumnMetadata) => string;

  constructor(
    private readonly dataSource: DataSource,
    entity: EntityTarget<T>,
  ) {
    const metadata = dataSource.getMetadata(entity);
    const driver = dataSource.driver;
    this.columns = metadata.columns;
    this.table = escapeTablePath(dataSource, metadata.tablePath);
    // SQLite keeps jsonb columns in its binary JSON format: read them through json(), write through jsonb().
    const wrap = (
      driver as unknown as { wrapWithJsonFunction?: (value: string, column: ColumnMetadata, jsonb?: boolean) => string }
    ).wrapWithJsonFunction;
    this.wrapRead = (column) =>
      wrap ? wrap.call(driver, driver.escape(column.databaseName), column) : driver.escape(column.databaseName);
    this.wrapWrite = (mark, column) => (wrap ? wrap.call(driver, mark, column, true) : mark);
    const names = this.columns.map((c) => driver.escape(c.databaseName));
    this.selectList = this.columns
      .map((c, i) => (this.wrapRead(c) === names[i] ? names[i] : `${this.wrapRead(c)} AS ${names[i]}`))
      .join(', ');
    this.passThrough = this.columns.map(
      (c) => !c.transformer && !c.isArray && typeof c.type === 'string' && PASS_THROUGH_TYPES.has(c.type),
    );
    const Query = (driver as unknown as { postgres?: { Query?: unknown } }).postgres?.Query;
    this.queryClass = typeof Query === 'function' ? (Query as PgQueryClass) : undefined;
    this.numbered = ['postgres', 'cockroachdb', 'aurora-postgres'].includes(String(dataSource.options.type));
    this.insertHead = `INSERT INTO ${this.table} (${names.join(', ')})`;
    // PostgreSQL itself only: CockroachDB has no synchronous_commit, and other drivers have no pg pool.
    this.arrayInserts =
      dataSource.options.type === 'postgres'
        ? {
            sync: { many: this.prepared(''), one: this.preparedOne('') },
            async: { many: this.prepared(ASYNC_COMMIT_FILTER), one: this.preparedOne(ASYNC_COMMIT_FILTER) },
          }
        : null;
  }

  /**
   * The statement of an array insert: one array parameter per column, cast to the column's type,
   * so the statement text (and so its prepared plan) does not depend on the number of rows.
   */
  private prepared(filter: string): PreparedStatement {
    const driver = this.dataSource.driver;
    const arrays = this.columns.map((column, i) => `$${i + 1}::${driver.normalizeType(column)}[]`);
    return this.named(`${this.insertHead} SELECT * FROM unnest(${arrays.join(', ')})${filter}`);
  }

  /**
   * The statement of a one-row insert: one parameter per column, cast to the column's type. On
   * PostgreSQL 15 a lone row inserted this way costs 60 to 100 µs less of the round trip than
   * through one-element arrays (measured from `pg` against a local server).
   */
  private preparedOne(filter: string): PreparedStatement {
    const driver = this.dataSource.driver;
    const values = this.columns.map(
      (column, i) => `$${i + 1}::${driver.normalizeType(column)}${column.isArray ? '[]' : ''}`,
    );
    return this.named(`${this.insertHead} SELECT ${values.join(', ')}${filter}`);
  }

  /** Its name is derived from its text: two tables (a schema, an `entityPrefix`) never share a name. */
  private named(text: string): PreparedStatement {
    return { name: `mcp_insert_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`, text };
  }

  /**
   * Inserts rows with one statement. On PostgreSQL that is a named prepared statement taking one
   * array per column (parsed and planned once per connection), or one value per column for a
   * single row; `commit: 'async'` turns
   * `synchronous_commit` off for its transaction alone. Elsewhere it is one multi-row VALUES
   * statement (`insertValues`) and the commit mode changes nothing.
   */
  async insert(rows: Partial<T>[], commit: McpCommitMode = 'sync'): Promise<void> {
    const pool = this.pool();
    if (!this.arrayInserts || !pool) return this.insertValues(rows);
    const columns = this.columns;
    if (rows.length === 1) {
      const row = rows[0];
      const values = new Array<unknown>(columns.length);
      for (let c = 0; c < columns.length; c++) values[c] = this.insertable(c, row[columns[c].propertyName as keyof T]);
      return this.runPrepared(pool, this.arrayInserts[commit].one, values);
    }
    const values = new Array<unknown[]>(columns.length);
    for (let c = 0; c < columns.length; c++) {
      const property = columns[c].propertyName as keyof T;
      const array = new Array<unknown>(rows.length);
      for (let r = 0; r < rows.length; r++) array[r] = this.insertable(c, rows[r][property]);
      values[c] = array;
    }
    return this.runPrepared(pool, this.arrayInserts[commit].many, values);
  }

  /**
   * Runs a named prepared statement. It is handed to `pg` as a ready `Query`, which the pool runs
   * as it is: a config object would first be copied, property descriptor by descriptor.
   */
  private runPrepared(pool: PgPool, statement: PreparedStatement, values: unknown[]): Promise<void> {
    const Query = this.queryClass;
    if (!Query) return pool.query({ ...statement, values }).then(() => undefined);
    const query = new Query(statement.text, values);
    query.name = statement.name;
    return new Promise((resolve, reject) =>
      pool.query(query, undefined, (error) => (error ? reject(error) : resolve())),
    );
  }

  /** The value of column `c` as `pg` is handed it: as it is for a pass-through column, else converted by the driver. */
  private insertable(c: number, value: unknown): unknown {
    return this.passThrough[c] && !(value instanceof JsonText)
      ? (value ?? null)
      : this.persistent(this.columns[c], value);
  }

  /** Inserts rows with one multi-row VALUES statement, its text built for this number of rows (SQLite's form). */
  async insertValues(rows: Partial<T>[]): Promise<void> {
    const params: unknown[] = [];
    const tuples: string[] = [];
    for (const row of rows) {
      const marks: string[] = [];
      for (const column of this.columns) {
        params.push(this.persistent(column, row[column.propertyName as keyof T]));
        marks.push(this.wrapWrite(this.mark(params.length), column));
      }
      tuples.push(`(${marks.join(', ')})`);
    }
    await this.run(`${this.insertHead} VALUES ${tuples.join(', ')}`, params);
  }

  /** Selects the rows whose `property` is one of `values`. */
  async findIn(property: keyof T & string, values: readonly unknown[]): Promise<T[]> {
    const column = this.column(property);
    const marks = values.map((_, i) => this.mark(i + 1)).join(', ');
    const raw = await this.run(
      `SELECT ${this.selectList} FROM ${this.table} WHERE ${this.dataSource.driver.escape(column.databaseName)} IN (${marks})`,
      values.map((value) => this.persistent(column, value)),
    );
    return raw.map((record) => this.hydrate(record));
  }

  /**
   * Runs one statement. On PostgreSQL it goes straight to the driver's pool (one checkout, one
   * round trip, autocommit), skipping the query-runner layer that costs more than the query.
   */
  private async run(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    const pool = this.pool();
    if (pool) return (await pool.query(sql, params)).rows;
    return this.dataSource.query(sql, params);
  }

  /** The `pg` pool of a PostgreSQL DataSource, once it is connected. */
  private pool(): PgPool | undefined {
    const pool = this.numbered ? (this.dataSource.driver as unknown as { master?: PgPool }).master : undefined;
    return pool && typeof pool.query === 'function' ? pool : undefined;
  }

  private hydrate(record: Record<string, unknown>): T {
    const entity: Record<string, unknown> = {};
    for (const column of this.columns) {
      entity[column.propertyName] = this.dataSource.driver.prepareHydratedValue(record[column.databaseName], column);
    }
    return entity as T;
  }

  private persistent(column: ColumnMetadata, value: unknown): unknown {
    if (value instanceof JsonText) return value.text;
    return value === undefined || value === null ? null : this.dataSource.driver.preparePersistentValue(value, column);
  }

  private column(property: string): ColumnMetadata {
    const column = this.columns.find((c) => c.propertyName === property);
    if (!column) throw new Error(`${this.table} has no column for property ${property}`);
    return column;
  }

  private mark(index: number): string {
    return this.numbered ? `$${index}` : '?';
  }
}
