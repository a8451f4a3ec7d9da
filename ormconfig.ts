import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { MCP_ENTITIES, MCP_MIGRATIONS } from './src/mcp';

/**
 * The DataSource the TypeORM CLI uses (`npm run migration:run`): PostgreSQL from DATABASE_URL.
 * Host apps add MCP_ENTITIES and MCP_MIGRATIONS to their own DataSource instead.
 */
export default new DataSource({
  type: 'postgres',
  url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  entities: MCP_ENTITIES,
  migrations: MCP_MIGRATIONS,
});
