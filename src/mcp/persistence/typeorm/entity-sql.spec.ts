import type { DataSource } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { JsonText } from '../json-text';
import { EntitySql, escapedTableOf, escapeTablePath } from './entity-sql';

interface Row {
  id: string;
  sessionId: string;
  payload: unknown;
}

const columns = [
  { propertyName: 'id', databaseName: 'id', type: 'uuid' },
  { propertyName: 'sessionId', databaseName: 'session_id', type: 'varchar' },
  { propertyName: 'payload', databaseName: 'payload', type: 'jsonb' },
] as unknown as ColumnMetadata[];

function fakeDataSource(
  type: string,
  options: { json?: boolean; pool?: boolean; tablePath?: string; columns?: ColumnMetadata[] } = {},
) {
  const poolQuery = jest.fn(
    async (_sql: string | { name: string; text: string; values: unknown[] }, _params?: unknown[]) => ({
      rows: [] as Record<string, unknown>[],
    }),
  );
  const query = jest.fn(async (_sql: string, _params: unknown[]) => [] as Record<string, unknown>[]);
  const driver: Record<string, unknown> = {
    escape: (name: string) => `"${name}"`,
    preparePersistentValue: (value: unknown, column: ColumnMetadata) => `${column.databaseName}<${String(value)}>`,
    normalizeType: (column: ColumnMetadata) =>
      typeof column.type === 'string'
        ? ({ uuid: 'uuid', varchar: 'character varying', jsonb: 'jsonb' } as Record<string, string>)[column.type]
        : 'timestamp without time zone',
    prepareHydratedValue: (value: unknown, column: ColumnMetadata) =>
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the fake driver writes any value as text
      value === undefined ? `missing ${column.databaseName}` : `${column.propertyName}=${String(value)}`,
  };
  if (options.pool !== false) driver.master = { query: poolQuery };
  if (options.json) {
    driver.wrapWithJsonFunction = function (this: unknown, value: string, column: ColumnMetadata, jsonb = false) {
      expect(this).toBe(driver);
      return column.type === 'jsonb' ? `${jsonb ? 'jsonb' : 'json'}(${value})` : value;
    };
  }
  const dataSource = {
    driver,
    options: { type },
    getMetadata: () => ({ columns: options.columns ?? columns, tablePath: options.tablePath ?? 'mcp.app_events' }),
    query,
  } as unknown as DataSource;
  return { dataSource, poolQuery, query };
}

describe('escapeTablePath / escapedTableOf', () => {
  it('escapes each part of a schema-qualified path on its own', () => {
    const { dataSource } = fakeDataSource('postgres');
    expect(escapeTablePath(dataSource, 'mcp.app_events')).toBe('"mcp"."app_events"');
    expect(escapeTablePath(dataSource, 'events')).toBe('"events"');
    expect(escapedTableOf(dataSource, 'Whatever')).toBe('"mcp"."app_events"');
  });
});

describe('EntitySql on PostgreSQL', () => {
  it('inserts several rows with one named statement taking one array per column, cast to the column type', async () => {
    const { dataSource, poolQuery, query } = fakeDataSource('postgres');
    const sql = new EntitySql<Row>(dataSource, 'Row');
    await sql.insert([
      { id: '1', sessionId: 's', payload: new JsonText('{"a":1}') },
      { id: '2', payload: null },
    ]);
    await sql.insert([
      { id: '3', sessionId: 't', payload: { b: 2 } },
      { id: '4', sessionId: 'u', payload: null },
      { id: '5', sessionId: 'v', payload: null },
    ]);
    expect(query).not.toHaveBeenCalled();
    const [two, three] = poolQuery.mock.calls.map(
      ([statement]) => statement as { name: string; text: string; values: unknown[] },
    );
    expect(two.text).toBe(
      'INSERT INTO "mcp"."app_events" ("id", "session_id", "payload") SELECT * FROM unnest($1::uuid[], $2::character varying[], $3::jsonb[])',
    );
    // uuid and varchar values pass as they are (the driver converts nothing of theirs); JSON goes
    // through the driver, unless it is JSON text already.
    expect(two.values).toEqual([
      ['1', '2'],
      ['s', null],
      ['{"a":1}', null],
    ]);
    // Two rows or three: the same statement, so PostgreSQL parses and plans it once per connection.
    expect(three.name).toBe(two.name);
    expect(three.text).toBe(two.text);
    expect(three.values).toEqual([
      ['3', '4', '5'],
      ['t', 'u', 'v'],
      ['payload<[object Object]>', null, null],
    ]);
    expect(two.name).toMatch(/^mcp_insert_[0-9a-f]{24}$/);
  });

  it('inserts a lone row with a named statement of its own, one value per column cast to the column type', async () => {
    const { dataSource, poolQuery } = fakeDataSource('postgres');
    const sql = new EntitySql<Row>(dataSource, 'Row');
    await sql.insert([{ id: '1', sessionId: 's', payload: { b: 2 } }]);
    await sql.insert([{ id: '2', payload: new JsonText('{"a":1}') }]);
    await sql.insert([
      { id: '3', payload: null },
      { id: '4', payload: null },
    ]);
    const [first, second, pair] = poolQuery.mock.calls.map(
      ([statement]) => statement as { name: string; text: string; values: unknown[] },
    );
    expect(first.text).toBe(
      'INSERT INTO "mcp"."app_events" ("id", "session_id", "payload") SELECT $1::uuid, $2::character varying, $3::jsonb',
    );
    expect(first.values).toEqual(['1', 's', 'payload<[object Object]>']);
    expect(second).toEqual({ name: first.name, text: first.text, values: ['2', null, '{"a":1}'] });
    expect(first.name).toMatch(/^mcp_insert_[0-9a-f]{24}$/);
    expect(first.name).not.toBe(pair.name);
  });

  it('hands a value to the driver when its column has a transformer, an array type or a type the driver converts', async () => {
    const converted = [
      {
        propertyName: 'a',
        databaseName: 'a',
        type: 'varchar',
        transformer: { to: (v: unknown) => v, from: (v: unknown) => v },
      },
      { propertyName: 'b', databaseName: 'b', type: 'varchar', isArray: true },
      { propertyName: 'c', databaseName: 'c', type: Date },
      { propertyName: 'd', databaseName: 'd', type: 'enum' },
      { propertyName: 'e', databaseName: 'e', type: 'text' },
    ] as unknown as ColumnMetadata[];
    const { dataSource, poolQuery } = fakeDataSource('postgres', { columns: converted });
    await new EntitySql<Record<string, unknown>>(dataSource, 'Row').insert([
      { a: 'x', b: ['y'], c: 'z', d: 'w', e: 'v' },
      { a: undefined, e: new JsonText('{}') },
    ]);
    const { values } = poolQuery.mock.calls[0][0] as { values: unknown[][] };
    expect(values).toEqual([
      ['a<x>', null],
      ['b<y>', null],
      ['c<z>', null],
      ['d<w>', null],
      ['v', '{}'],
    ]);
    // A lone row: the same conversions, and an array column's value is cast to the array type.
    await new EntitySql<Record<string, unknown>>(dataSource, 'Row').insert([
      { a: 'x', b: ['y'], c: 'z', d: 'w', e: 'v' },
    ]);
    const one = poolQuery.mock.calls[1][0] as { text: string; values: unknown[] };
    expect(one.values).toEqual(['a<x>', 'b<y>', 'c<z>', 'd<w>', 'v']);
    expect(one.text).toContain(
      'SELECT $1::character varying, $2::character varying[], $3::timestamp without time zone',
    );
  });

  it('turns synchronous_commit off for the transaction of an async insert only, under its own statement names', async () => {
    const { dataSource, poolQuery } = fakeDataSource('postgres');
    const sql = new EntitySql<Row>(dataSource, 'Row');
    const pair = [{ id: '3' }, { id: '4' }];
    await sql.insert([{ id: '1' }], 'async');
    await sql.insert([{ id: '2' }], 'sync');
    await sql.insert(pair, 'async');
    await sql.insert(pair, 'sync');
    const [asyncOne, syncOne, asyncMany, syncMany] = poolQuery.mock.calls.map(
      ([statement]) => statement as { name: string; text: string },
    );
    const filter = " WHERE (SELECT set_config('synchronous_commit', 'off', true)) = 'off'";
    expect(asyncOne.text).toBe(`${syncOne.text}${filter}`);
    expect(asyncMany.text).toBe(`${syncMany.text}${filter}`);
    expect(new Set([asyncOne.name, syncOne.name, asyncMany.name, syncMany.name]).size).toBe(4);
  });

  it('names the statements of two tables apart, so one connection can hold both', () => {
    const names = ['mcp.app_events', 'mcp.other_events'].map((tablePath) => {
      const { dataSource, poolQuery } = fakeDataSource('postgres', { tablePath });
      void new EntitySql<Row>(dataSource, 'Row').insert([{ id: '1' }]);
      return (poolQuery.mock.calls[0][0] as { name: string }).name;
    });
    expect(names[0]).not.toBe(names[1]);
  });

  it('still builds the multi-row VALUES form on request, with numbered placeholders in column order', async () => {
    const { dataSource, poolQuery } = fakeDataSource('postgres');
    await new EntitySql<Row>(dataSource, 'Row').insertValues([
      { id: '1', sessionId: 's', payload: new JsonText('{"a":1}') },
      { id: '2', payload: null },
    ]);
    expect(poolQuery).toHaveBeenCalledWith(
      'INSERT INTO "mcp"."app_events" ("id", "session_id", "payload") VALUES ($1, $2, $3), ($4, $5, $6)',
      ['id<1>', 'session_id<s>', '{"a":1}', 'id<2>', null, null],
    );
  });

  it('falls back to the VALUES form through the DataSource when the driver has no pool', async () => {
    const { dataSource, query } = fakeDataSource('postgres', { pool: false });
    await new EntitySql<Row>(dataSource, 'Row').insert([{ id: '1', sessionId: 's', payload: null }], 'async');
    expect(query).toHaveBeenCalledWith(
      'INSERT INTO "mcp"."app_events" ("id", "session_id", "payload") VALUES ($1, $2, $3)',
      ['id<1>', 'session_id<s>', null],
    );
  });

  it('selects by a key list with numbered placeholders and hydrates each row by property', async () => {
    const { dataSource, poolQuery } = fakeDataSource('postgres');
    poolQuery.mockResolvedValueOnce({ rows: [{ id: '1', session_id: 's', payload: 'p' }] });
    const rows = await new EntitySql<Row>(dataSource, 'Row').findIn('sessionId', ['a', 'b']);
    expect(poolQuery).toHaveBeenCalledWith(
      'SELECT "id", "session_id", "payload" FROM "mcp"."app_events" WHERE "session_id" IN ($1, $2)',
      ['session_id<a>', 'session_id<b>'],
    );
    expect(rows).toEqual([{ id: 'id=1', sessionId: 'sessionId=s', payload: 'payload=p' }]);
  });

  it('goes through the DataSource when the driver has no pool to query', async () => {
    const { dataSource, query } = fakeDataSource('postgres', { pool: false });
    query.mockResolvedValueOnce([{ id: '9', session_id: 'x', payload: null }]);
    const rows = await new EntitySql<Row>(dataSource, 'Row').findIn('id', ['9']);
    expect(query).toHaveBeenCalledWith(
      'SELECT "id", "session_id", "payload" FROM "mcp"."app_events" WHERE "id" IN ($1)',
      ['id<9>'],
    );
    expect(rows).toEqual([{ id: 'id=9', sessionId: 'sessionId=x', payload: 'payload=null' }]);
  });

  it.each(['cockroachdb', 'aurora-postgres'])('numbers placeholders on %s too', async (type) => {
    const { dataSource, poolQuery } = fakeDataSource(type);
    await new EntitySql<Row>(dataSource, 'Row').findIn('id', ['1', '2']);
    expect(poolQuery.mock.calls[0][0]).toContain('IN ($1, $2)');
  });

  it.each(['cockroachdb', 'aurora-postgres'])(
    'inserts with the VALUES form on %s, whatever the commit mode',
    async (type) => {
      const { dataSource, poolQuery } = fakeDataSource(type);
      await new EntitySql<Row>(dataSource, 'Row').insert([{ id: '1', sessionId: 's', payload: null }], 'async');
      expect(poolQuery).toHaveBeenCalledWith(
        'INSERT INTO "mcp"."app_events" ("id", "session_id", "payload") VALUES ($1, $2, $3)',
        ['id<1>', 'session_id<s>', null],
      );
    },
  );

  it('names the table and the property when the entity has no such column', async () => {
    const { dataSource } = fakeDataSource('postgres');
    await expect(new EntitySql<Row>(dataSource, 'Row').findIn('nope' as keyof Row, ['1'])).rejects.toThrow(
      '"mcp"."app_events" has no column for property nope',
    );
  });
});

describe('EntitySql on SQLite', () => {
  it('uses ? placeholders, the DataSource, and reads and writes jsonb columns through json()/jsonb()', async () => {
    const { dataSource, query, poolQuery } = fakeDataSource('better-sqlite3', { json: true, tablePath: 'app_events' });
    const sql = new EntitySql<Row>(dataSource, 'Row');
    await sql.insert([{ id: '1', sessionId: 's', payload: { a: 1 } }], 'async');
    expect(query).toHaveBeenLastCalledWith(
      'INSERT INTO "app_events" ("id", "session_id", "payload") VALUES (?, ?, jsonb(?))',
      ['id<1>', 'session_id<s>', 'payload<[object Object]>'],
    );
    query.mockResolvedValueOnce([{ id: '1', session_id: 's', payload: '{}' }]);
    const rows = await sql.findIn('id', ['1', '2']);
    expect(query).toHaveBeenLastCalledWith(
      'SELECT "id", "session_id", json("payload") AS "payload" FROM "app_events" WHERE "id" IN (?, ?)',
      ['id<1>', 'id<2>'],
    );
    expect(rows).toEqual([{ id: 'id=1', sessionId: 'sessionId=s', payload: 'payload={}' }]);
    expect(poolQuery).not.toHaveBeenCalled();
  });
});
