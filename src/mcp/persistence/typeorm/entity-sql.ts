import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { JsonText } from '../json-text';

/** The part of a `pg` pool this class uses. */
interface PgPool {
  query(sql: string, params: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
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
    const wrap = (driver as unknown as { wrapWithJsonFunction?: (value: string, column: ColumnMetadata, jsonb?: boolean) => string }).wrapWithJsonFunction;
    this.wrapRead = (column) => (wrap ? wrap.call(driver, driver.escape(column.databaseName), column) : driver.escape(column.databaseName));
    this.wrapWrite = (mark, column) => (wrap ? wrap.call(driver, mark, column, true) : mark);
    const names = this.columns.map((c) => driver.escape(c.databaseName));
    this.selectList = this.columns.map((c, i) => (this.wrapRead(c) === names[i] ? names[i] : `${this.wrapRead(c)} AS ${names[i]}`)).join(', ');
    this.numbered = ['postgres', 'cockroachdb', 'aurora-postgres'].includes(String(dataSource.options.type));
    this.insertHead = `INSERT INTO ${this.table} (${names.join(', ')})`;
  }

  /** Inserts rows with one statement. */
  async insert(rows: Partial<T>[]): Promise<void> {
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
    const pool = this.numbered ? (this.dataSource.driver as unknown as { master?: PgPool }).master : undefined;
    if (pool && typeof pool.query === 'function') return (await pool.query(sql, params)).rows;
    return this.dataSource.query(sql, params);
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
