import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MCP_ENTITIES, MCP_MIGRATIONS } from '../../src/mcp';

/** The server every test talks to: real PostgreSQL, trust auth (override with TEST_PG_URL). */
export const PG_ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A throwaway database with the package's migrations applied. */
export interface TestDatabase {
  name: string;
  url: string;
  /** A DataSource on it, for assertions on the rows. */
  dataSource: DataSource;
  /** Drops the database (closing every connection first). */
  drop(): Promise<void>;
}

function urlFor(name: string): string {
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Creates a fresh database, runs the shipped PostgreSQL migrations on it (unless `migrate` is false), and returns it. */
export async function createTestDatabase(migrate = true): Promise<TestDatabase> {
  const name = `mcp_test_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE "${name}"`));
  const url = urlFor(name);
  const dataSource = new DataSource({ type: 'postgres', url, entities: MCP_ENTITIES, migrations: MCP_MIGRATIONS });
  await dataSource.initialize();
  if (migrate) await dataSource.runMigrations();
  return {
    name,
    url,
    dataSource,
    async drop() {
      if (dataSource.isInitialized) await dataSource.destroy();
      await admin((client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}
