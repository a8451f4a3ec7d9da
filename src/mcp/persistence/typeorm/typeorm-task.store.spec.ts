import { DataSource } from 'typeorm';
import { MCP_ENTITIES } from '../entities';
import { McpTask } from '../entities/task.entity';
import { describeTaskStoreContract } from '../../../../test/support/task-store-contract';
import { TypeOrmTaskStore } from './typeorm-task.store';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/postgres';

/** The store on a real database (SQLite in memory). */
let dataSource: DataSource;

beforeAll(async () => {
  dataSource = await new DataSource({
    type: 'better-sqlite3',
    database: ':memory:',
    entities: MCP_ENTITIES,
    synchronize: true,
  }).initialize();
});

afterAll(async () => {
  await dataSource?.destroy();
});

describeTaskStoreContract(
  'TypeOrmTaskStore',
  (mount) => new TypeOrmTaskStore(dataSource.getRepository(McpTask), { mount, idleTtlMs: 60_000 }),
  async () => void (await dataSource.getRepository(McpTask).clear()),
);

describe('on PostgreSQL', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database?.drop();
  });

  describeTaskStoreContract(
    'TypeOrmTaskStore on PostgreSQL',
    (mount) => new TypeOrmTaskStore(database.dataSource.getRepository(McpTask), { mount, idleTtlMs: 60_000 }),
    async () => void (await database.dataSource.getRepository(McpTask).clear()),
  );
});
