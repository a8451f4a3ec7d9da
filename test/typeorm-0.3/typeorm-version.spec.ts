import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MCP_ENTITIES } from '../../src/mcp';

/** Guards the TypeORM 0.3 run (the suites next to it would prove nothing on 1.x) and pins its one limit. */
describe('the TypeORM 0.3 run', () => {
  it('loads TypeORM 0.3, and @nestjs/typeorm uses that same copy', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- reads the manifest of the copy Node resolves
    expect(require('typeorm/package.json').version).toMatch(/^0\.3\./);
    expect(getDataSourceToken()).toBe(DataSource);
  });

  it('refuses the entities on SQLite at initialize, naming the jsonb column (SQLite needs TypeORM 1.x)', async () => {
    const sqlite = new DataSource({
      type: 'better-sqlite3',
      database: ':memory:',
      entities: MCP_ENTITIES,
      synchronize: true,
    });
    await expect(sqlite.initialize()).rejects.toThrow(
      /Data type "jsonb" in "Mcp\w+\.\w+" is not supported by "better-sqlite3"/,
    );
    if (sqlite.isInitialized) await sqlite.destroy();
  });
});
