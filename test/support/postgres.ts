import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MCP_ENTITIES, MCP_MIGRATIONS } from '../../src/mcp';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- a JavaScript module Jest's globalSetup and the scripts share, outside the TypeScript project
const { DEFAULT_PG_URL } = require('./test-services.js') as { DEFAULT_PG_URL: string };

/**
 * The server every test talks to: real PostgreSQL, trust auth. TEST_PG_URL, which Jest's
 * globalSetup sets to the shared server or to one it started (test/support/test-services.js);
 * outside Jest, the shared server's default address.
 */
export const PG_ADMIN_URL = process.env.TEST_PG_URL || DEFAULT_PG_URL;

/** A throwaway database with the package's migrations applied. */
export interface TestDatabase {
  name: string;
  url: string;
  /** A DataSource on it, for assertions on the rows. */
  dataSource: DataSource;
  /** Drops the database (closing every connection first). */
  drop(): Promise<void>;
}

/**
 * How a test database gets its schema:
 * - `true` (the default): a copy of the migrated template (see `migratedTemplate`), the same
 *   tables and `migrations` rows as running the migrations, in a fraction of the time;
 * - `'run'`: the shipped migrations run on it for real (the suites that test the migrations);
 * - `false`: an empty database.
 */
export type Migrate = boolean | 'run';

/** Every test database's name starts with this; the templates' with `TEMPLATE_PREFIX`. */
const DATABASE_PREFIX = 'mcp_test_';
export const TEMPLATE_PREFIX = 'mcp_test_tpl_';
/** Bump when the way the template is built changes, so that no template of the old recipe is used. */
const TEMPLATE_RECIPE = '1';

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

/**
 * The template's name: a digest of what decides its content (the migrations' names in their
 * order, the source of every migration file, the TypeORM that runs them and writes the
 * `migrations` table, and the recipe). Another migration set, from another branch or an earlier
 * run, gets another name, so a stale template is never copied.
 */
export function templateName(): string {
  const hash = createHash('sha256');
  hash.update(`recipe ${TEMPLATE_RECIPE}\n`);
  hash.update(`migrations ${MCP_MIGRATIONS.map((migration) => migration.name).join(',')}\n`);
  const directory = join(__dirname, '..', '..', 'src', 'mcp', 'persistence', 'migrations');
  for (const file of readdirSync(directory).sort()) {
    hash.update(`file ${file}\n`);
    hash.update(readFileSync(join(directory, file)));
  }
  hash.update(`typeorm ${typeormVersion()}\n`);
  return `${TEMPLATE_PREFIX}${hash.digest('hex').slice(0, 16)}`;
}

/** The version of the TypeORM in use (the TypeORM 0.3 run maps `typeorm` to its own copy; the package exports no package.json). */
function typeormVersion(): string {
  // With `paths`, Jest's require.resolve applies moduleNameMapper (the TypeORM 0.3 run's); without, it would not.
  const main = require.resolve('typeorm', { paths: [__dirname] });
  let directory = dirname(main);
  while (!existsSync(join(directory, 'package.json'))) {
    const parent = dirname(directory);
    if (parent === directory) throw new Error(`no package.json above ${main}`);
    directory = parent;
  }
  return (JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { version: string }).version;
}

async function exists(client: Client, name: string): Promise<boolean> {
  const { rows } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  return rows.length > 0;
}

/**
 * Makes sure the migrated template exists and returns its name. The first caller of a run (or of
 * the first run after the migrations changed) builds it; the others wait on an advisory lock,
 * which also keeps two Jest workers, or two runs, from building it twice. It is built under a
 * temporary name, migrated, closed, and only then renamed: a template under the final name is
 * always complete, whatever interrupted an earlier build. It refuses connections (PostgreSQL
 * copies a database only while no one is connected to it, and no test can connect to it by
 * mistake and change it).
 */
async function migratedTemplate(): Promise<string> {
  const template = templateName();
  return admin(async (client) => {
    if (await exists(client, template)) return template;
    await client.query('SELECT pg_advisory_lock(hashtext($1)::bigint)', [template]);
    try {
      if (await exists(client, template)) return template;
      const building = `${template}_b${randomBytes(3).toString('hex')}`;
      await client.query(`CREATE DATABASE "${building}"`);
      try {
        const dataSource = new DataSource({
          type: 'postgres',
          url: urlFor(building),
          entities: MCP_ENTITIES,
          migrations: MCP_MIGRATIONS,
        });
        await dataSource.initialize();
        try {
          await dataSource.runMigrations();
        } finally {
          await dataSource.destroy();
        }
        await client.query(`ALTER DATABASE "${building}" WITH ALLOW_CONNECTIONS false IS_TEMPLATE true`);
        await client.query(`ALTER DATABASE "${building}" RENAME TO "${template}"`);
      } catch (error) {
        await client.query(`ALTER DATABASE "${building}" WITH IS_TEMPLATE false`).catch(() => undefined);
        await client.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`).catch(() => undefined);
        throw error;
      }
      return template;
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1)::bigint)', [template]);
    }
  });
}

/**
 * Creates a fresh database with the shipped PostgreSQL migrations applied (see `Migrate`: by
 * default a copy of the migrated template) and returns it.
 */
export async function createTestDatabase(migrate: Migrate = true): Promise<TestDatabase> {
  const name = `${DATABASE_PREFIX}${randomBytes(6).toString('hex')}`;
  const template = migrate === true ? await migratedTemplate() : undefined;
  await admin((client) =>
    client.query(template ? `CREATE DATABASE "${name}" TEMPLATE "${template}"` : `CREATE DATABASE "${name}"`),
  );
  const url = urlFor(name);
  const dataSource = new DataSource({ type: 'postgres', url, entities: MCP_ENTITIES, migrations: MCP_MIGRATIONS });
  await dataSource.initialize();
  if (migrate === 'run') await dataSource.runMigrations();
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

/**
 * Drops the migrated templates other than the current one (left by earlier migration sets, or by
 * an interrupted build), and returns what it dropped and what it could not drop (a build under
 * way elsewhere holds a connection to its database). Meant for when no other test run on this
 * server still copies an older template: a run that finds its template gone builds it again.
 */
export async function dropStaleTemplates(): Promise<{ dropped: string[]; kept: string[] }> {
  const current = templateName();
  return admin(async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE starts_with(datname, $1) AND datname <> $2 ORDER BY datname`,
      [TEMPLATE_PREFIX, current],
    );
    const dropped: string[] = [];
    const kept: string[] = [];
    for (const { datname } of rows) {
      try {
        await client.query(`ALTER DATABASE "${datname}" WITH IS_TEMPLATE false`);
        await client.query(`DROP DATABASE IF EXISTS "${datname}"`);
        dropped.push(datname);
      } catch (error) {
        kept.push(`${datname} (${error instanceof Error ? error.message : String(error)})`);
      }
    }
    return { dropped, kept };
  });
}
