import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MCP_ENTITIES, MCP_MIGRATIONS } from '../../../src/mcp';
import { freePort } from './free-port';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- JavaScript modules the scripts and Jest's globalSetup share, outside the TypeScript project
const { asPostgres: runAsPostgres, giveToPostgres } = require('../../support/embedded-postgres.js') as {
  asPostgres: (binary: string, args: string[]) => string;
  giveToPostgres: (path: string) => void;
};
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
const { DEFAULT_PG_BIN } = require('../../support/test-services.js') as { DEFAULT_PG_BIN: string };

/**
 * Where the PostgreSQL server binaries are: TEST_PG_BIN (which the test run's own services set to
 * the embedded binaries when they start a server and this machine has no PostgreSQL 15 of its own),
 * else Debian's PostgreSQL 15.
 */
const PG_BIN = process.env.TEST_PG_BIN || DEFAULT_PG_BIN;

/**
 * A PostgreSQL cluster of this test alone, on a free loopback port, that the test may stop,
 * start and stall without touching the shared server. It holds one database, `test`, with the
 * package's migrations applied.
 */
export interface PrivatePostgres {
  port: number;
  /** postgres://postgres@127.0.0.1:PORT/test */
  url: string;
  /** A DataSource on `test` for assertions; it reconnects by itself after a restart. */
  dataSource: DataSource;
  /** `pg_ctl stop -m fast`: every connection is cut, new ones are refused. */
  stop(): Promise<void>;
  /** Starts the cluster again on the same port and waits until it accepts connections. */
  start(): Promise<void>;
  /**
   * SIGSTOP to the postmaster: the port still accepts TCP connections, but no new session
   * starts. Backends that already serve a connection go on working.
   */
  freeze(): void;
  /** SIGCONT to the postmaster. */
  thaw(): void;
  /** The server log so far (for a failing test's message). */
  log(): string;
  /** Stops the cluster (if running) and removes its directory. */
  destroy(): Promise<void>;
}

/** Runs a PostgreSQL binary as the `postgres` user when root (the binaries refuse to run as root). */
function asPostgres(binary: string, args: string[]): string {
  return runAsPostgres(join(PG_BIN, binary), args);
}

function postmasterPid(dir: string): number | null {
  try {
    return Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return null;
  }
}

/** Creates, starts and migrates a private cluster. Call `destroy()` in `afterAll`, whatever happens. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-faults-pg-'));
  giveToPostgres(dir);
  // A port that was free a moment ago may be taken by the time the postmaster binds it (another
  // process's outgoing connection can get it as its local port): the first start tries another.
  let port = await freePort();
  const data = join(dir, 'data');
  let running = false;
  let frozen = false;
  const ctl = (args: string[]) => asPostgres('pg_ctl', ['-D', data, ...args]);
  const start = async () => {
    ctl([
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
      '-l',
      join(dir, 'log'),
      '-w',
      '-t',
      '60',
      'start',
    ]);
    running = true;
  };
  const stop = async () => {
    if (frozen) thaw();
    ctl(['-m', 'fast', '-w', '-t', '30', 'stop']);
    running = false;
  };
  const thaw = () => {
    const pid = postmasterPid(data);
    if (pid && frozen) process.kill(pid, 'SIGCONT');
    frozen = false;
  };
  let dataSource: DataSource | undefined;
  try {
    asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    for (let attempt = 1; ; attempt++) {
      try {
        await start();
        break;
      } catch (error) {
        if (attempt >= 3 || !/could not bind|address already in use/i.test(serverLog(dir))) throw error;
        port = await freePort();
      }
    }
    const admin = new Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
    await admin.connect();
    await admin.query('CREATE DATABASE test');
    await admin.end();
    const url = `postgres://postgres@127.0.0.1:${port}/test`;
    dataSource = new DataSource({
      type: 'postgres',
      url,
      entities: MCP_ENTITIES,
      migrations: MCP_MIGRATIONS,
      extra: { connectionTimeoutMillis: 2000, max: 4 },
    });
    await dataSource.initialize();
    await dataSource.runMigrations();
    const ds = dataSource;
    return {
      port,
      url,
      dataSource: ds,
      stop,
      start,
      freeze() {
        const pid = postmasterPid(data);
        if (!pid) throw new Error('The private PostgreSQL is not running');
        process.kill(pid, 'SIGSTOP');
        frozen = true;
      },
      thaw,
      log: () => serverLog(dir),
      async destroy() {
        if (frozen) thaw();
        if (ds.isInitialized) await ds.destroy().catch(() => undefined);
        if (running) await stop().catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    if (dataSource?.isInitialized) await dataSource.destroy().catch(() => undefined);
    if (frozen) thaw();
    // pg_ctl may give up waiting while the postmaster it started goes on booting: stop it too.
    if (running || postmasterPid(data)) await stop().catch(() => undefined);
    const stray = postmasterPid(data);
    if (stray) {
      try {
        process.kill(stray, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    // The directory goes, and the server's log with it: the error keeps the log's last lines.
    const log = serverLog(dir).trimEnd().split('\n').slice(-20).join('\n');
    rmSync(dir, { recursive: true, force: true });
    if (error instanceof Error && log) error.message += `\nThe private PostgreSQL's log ends with:\n${log}`;
    throw error;
  }
}

/** The cluster's server log so far ('' when there is none). */
function serverLog(dir: string): string {
  try {
    return readFileSync(join(dir, 'log'), 'utf8');
  } catch {
    return '';
  }
}
