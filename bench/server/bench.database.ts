import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** A throwaway PostgreSQL database for target (c); the app runs its own migrations on it. */
export interface BenchDatabase {
  name: string;
  url: string;
  /** Rows in `mcp_events`, grouped by kind, method and HTTP status. */
  eventCounts(): Promise<EventCount[]>;
  /** Drops the database, closing its connections first. */
  drop(): Promise<void>;
}

/** One group of `mcp_events` rows. */
export interface EventCount {
  kind: string;
  method: string | null;
  status: number | null;
  rows: number;
}

async function withClient<T>(url: string, run: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Creates `mcp_bench_<random>` on the server of `adminUrl`. */
export async function createBenchDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `mcp_bench_${randomBytes(6).toString('hex')}`;
  await withClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    eventCounts: () =>
      withClient(url.toString(), async (client) => {
        const { rows } = await client.query<{
          kind: string;
          method: string | null;
          status: number | null;
          rows: string;
        }>(
          'SELECT kind, method, status, count(*) AS rows FROM mcp_events GROUP BY kind, method, status ORDER BY count(*) DESC',
        );
        return rows.map((row) => ({ ...row, rows: Number(row.rows) }));
      }),
    drop: () =>
      withClient(
        adminUrl,
        async (client) => void (await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)),
      ),
  };
}

/**
 * The PostgreSQL backends serving given databases, found in `pg_stat_activity` over one
 * administrative connection kept open for the whole run (its own backend serves the admin
 * database, so it is never counted).
 */
export class PostgresBackends {
  private constructor(private readonly client: Client) {}

  /** Connects to the server of `adminUrl`. */
  static async connect(adminUrl: string): Promise<PostgresBackends> {
    const client = new Client({ connectionString: adminUrl });
    await client.connect();
    return new PostgresBackends(client);
  }

  /** Pids of the backends connected to `database` right now. */
  async pids(database: string): Promise<number[]> {
    const { rows } = await this.client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
      database,
    ]);
    return rows.map((row) => Number(row.pid));
  }

  /** Closes the administrative connection. */
  close(): Promise<void> {
    return this.client.end();
  }
}
