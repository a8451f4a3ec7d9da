import { DataSource } from 'typeorm';
import { McpDatabaseUnavailableError } from '../../errors/mcp-outage.errors';
import { MCP_ENTITIES } from '../entities';
import { McpHandlerSwitch } from '../entities/handler-switch.entity';
import { storedHandlerName, storedPrincipalKey } from '../new-records';
import { TypeOrmHandlerSwitchStore } from './typeorm-handler-switch.store';

/** The store on a real database (SQLite in memory): one statement per write, rows as the contract says. */
describe('TypeOrmHandlerSwitchStore', () => {
  let dataSource: DataSource;
  /** The statements sent while `recording`. */
  const statements: string[] = [];
  let recording = false;

  const storeOf = (mount: string) =>
    new TypeOrmHandlerSwitchStore(dataSource.getRepository(McpHandlerSwitch), { mount, idleTtlMs: 60_000 });
  const triples = async (store: TypeOrmHandlerSwitchStore) =>
    (await store.list())
      .map((r) => [r.mount, r.kind, r.name, r.principalKey])
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  async function recorded(work: () => Promise<unknown>): Promise<string[]> {
    statements.length = 0;
    recording = true;
    try {
      await work();
    } finally {
      recording = false;
    }
    return statements.filter((sql) => !/^(BEGIN|COMMIT|SAVEPOINT|RELEASE)/i.test(sql));
  }

  beforeAll(async () => {
    const quiet = () => undefined;
    const logger = {
      logQuery: (sql: string) => void (recording && statements.push(sql)),
      logQueryError: quiet,
      logQuerySlow: quiet,
      logSchemaBuild: quiet,
      logMigration: quiet,
      log: quiet,
    };
    dataSource = await new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: MCP_ENTITIES,
      synchronize: true,
      logging: ['query'],
      logger,
    }).initialize();
  });

  afterEach(async () => {
    await dataSource.getRepository(McpHandlerSwitch).clear();
  });

  afterAll(async () => {
    await dataSource?.destroy();
  });

  it('turns off in one INSERT that keeps rows already there, and lists "everyone" as null', async () => {
    const store = storeOf('m1');
    await store.disable('tool', 'greet', ['bob']);
    const sent = await recorded(() => store.disable('tool', 'greet', ['bob', 'carol', 'bob']));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^INSERT INTO "mcp_handler_switches".* ON CONFLICT DO NOTHING$/);
    await store.disable('tool', 'greet', null);
    await store.disable('tool', 'greet', null);
    expect(await triples(store)).toEqual([
      ['m1', 'tool', 'greet', 'bob'],
      ['m1', 'tool', 'greet', 'carol'],
      ['m1', 'tool', 'greet', null],
    ]);
    const rows = await dataSource.getRepository(McpHandlerSwitch).find({ order: { principalKey: 'ASC' } });
    expect(rows.map((r) => r.principalKey)).toEqual(['', 'bob', 'carol']);
    expect(rows.every((r) => r.createdAt instanceof Date)).toBe(true);
  });

  it('turns on in one DELETE: for principals their own rows only, without them every row of the handler', async () => {
    const store = storeOf('m1');
    await store.disable('tool', 'greet', null);
    await store.disable('tool', 'greet', ['bob', 'carol']);
    await store.disable('prompt', 'greet', ['bob']);
    const sent = await recorded(() => store.enable('tool', 'greet', ['bob', 'dave']));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^DELETE FROM "mcp_handler_switches"/);
    expect(await triples(store)).toEqual([
      ['m1', 'prompt', 'greet', 'bob'],
      ['m1', 'tool', 'greet', 'carol'],
      ['m1', 'tool', 'greet', null],
    ]);
    expect(await recorded(() => store.enable('tool', 'greet', null))).toHaveLength(1);
    expect(await triples(store)).toEqual([['m1', 'prompt', 'greet', 'bob']]);
    expect(
      await recorded(() => Promise.all([store.enable('prompt', 'greet', []), store.disable('prompt', 'greet', [])])),
    ).toEqual([]);
  });

  it('keeps each mount to its own rows', async () => {
    const [one, two] = [storeOf('m1'), storeOf('m2')];
    await one.disable('tool', 'greet', null);
    await two.disable('tool', 'greet', ['bob']);
    await one.enable('tool', 'greet', ['bob']);
    expect(await triples(one)).toEqual([['m1', 'tool', 'greet', null]]);
    await two.enable('tool', 'greet', null);
    expect(await triples(two)).toEqual([]);
    expect(await triples(one)).toEqual([['m1', 'tool', 'greet', null]]);
  });

  it('stores long names and principal keys in their stored form and lifts them by the originals', async () => {
    const store = storeOf('m1');
    const uri = `docs://${'é'.repeat(1500)}`;
    const key = 'k'.repeat(400);
    await store.disable('resource', uri, [key]);
    expect(await triples(store)).toEqual([['m1', 'resource', storedHandlerName(uri), storedPrincipalKey(key)]]);
    await store.enable('resource', uri, [key]);
    expect(await triples(store)).toEqual([]);
  });

  it('rejects with McpDatabaseUnavailableError when the database is gone', async () => {
    const closed = await new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: MCP_ENTITIES,
      synchronize: true,
    }).initialize();
    const store = new TypeOrmHandlerSwitchStore(closed.getRepository(McpHandlerSwitch), {
      mount: 'm1',
      idleTtlMs: 60_000,
    });
    await closed.destroy();
    const failure = store.list();
    await expect(failure).rejects.toBeInstanceOf(McpDatabaseUnavailableError);
    await expect(failure).rejects.toMatchObject({ operation: 'handler switch list', timeoutMs: undefined });
    await expect(store.disable('tool', 'greet', null)).rejects.toMatchObject({
      name: 'McpDatabaseUnavailableError',
      operation: 'handler switch insert',
    });
    await expect(store.enable('tool', 'greet', null)).rejects.toMatchObject({
      name: 'McpDatabaseUnavailableError',
      operation: 'handler switch delete',
    });
  });
});
