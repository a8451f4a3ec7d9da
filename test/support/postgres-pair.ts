import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- JavaScript modules the scripts and Jest's globalSetup share
const { asPostgres: runAsPostgres, giveToPostgres } = require('./embedded-postgres.js') as {
  asPostgres: (binary: string, args: string[]) => string;
  giveToPostgres: (path: string) => void;
};
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
const { DEFAULT_PG_BIN } = require('./test-services.js') as { DEFAULT_PG_BIN: string };

const PG_BIN = process.env.TEST_PG_BIN || DEFAULT_PG_BIN;
const pgBin = (binary: string, args: string[]) => runAsPostgres(join(PG_BIN, binary), args);

/** A primary and a streaming standby of a test's own, each a private cluster. */
export interface PostgresPair {
  primaryPort: number;
  standbyPort: number;
  /** `postgres://postgres@127.0.0.1:P,127.0.0.1:S/test?target_session_attrs=read-write` */
  hostListUrl: string;
  /** `pg_ctl -m immediate stop` of the primary (a crash). */
  stopPrimary(): void;
  /** `pg_ctl promote` of the standby, waiting until it accepts writes. */
  promoteStandby(): void;
  /** Stops both clusters and removes their directories. */
  destroy(): Promise<void>;
}

/**
 * initdb a primary (`wal_level=replica`; with `sync`, `synchronous_standby_names='*'`, so a commit
 * waits for the standby), create database `test`, pg_basebackup a standby (`-R`) and start it.
 */
export async function startPostgresPair(options: {
  primaryPort: number;
  standbyPort: number;
  sync: boolean;
}): Promise<PostgresPair> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-pg-pair-'));
  giveToPostgres(dir);
  const primary = join(dir, 'primary');
  const standby = join(dir, 'standby');
  const running = new Set<string>();
  const start = (data: string, port: number, extra: string) => {
    pgBin('pg_ctl', [
      '-D',
      data,
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 ${extra}`,
      '-l',
      `${data}.log`,
      '-w',
      '-t',
      '60',
      'start',
    ]);
    running.add(data);
  };
  const stop = (data: string, mode: string) => {
    if (!running.has(data)) return;
    running.delete(data);
    pgBin('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
  };
  const destroy = async () => {
    for (const data of [...running]) {
      try {
        stop(data, 'immediate');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    pgBin('initdb', ['-D', primary, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    start(
      primary,
      options.primaryPort,
      `-c wal_level=replica -c max_wal_senders=4${options.sync ? " -c synchronous_standby_names='*'" : ''}`,
    );
    pgBin('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(options.primaryPort),
      '-U',
      'postgres',
      '-D',
      standby,
      '-R',
      '-X',
      'stream',
    ]);
    start(standby, options.standbyPort, '-c hot_standby=on');
    const admin = new Client({ connectionString: `postgres://postgres@127.0.0.1:${options.primaryPort}/postgres` });
    await admin.connect();
    await admin.query('CREATE DATABASE test');
    await admin.end();
    return {
      primaryPort: options.primaryPort,
      standbyPort: options.standbyPort,
      hostListUrl: `postgres://postgres@127.0.0.1:${options.primaryPort},127.0.0.1:${options.standbyPort}/test?target_session_attrs=read-write`,
      stopPrimary: () => stop(primary, 'immediate'),
      promoteStandby: () => {
        pgBin('pg_ctl', ['-D', standby, '-w', '-t', '60', 'promote']);
      },
      destroy,
    };
  } catch (error) {
    // The directory goes, and the servers' logs with it: the error keeps their last lines.
    const logs = [primary, standby]
      .map((data) => {
        try {
          const lines = readFileSync(`${data}.log`, 'utf8').trimEnd().split('\n').slice(-20).join('\n');
          return lines ? `\n${data}.log ends with:\n${lines}` : '';
        } catch {
          return '';
        }
      })
      .join('');
    await destroy();
    if (error instanceof Error && logs) error.message += logs;
    throw error;
  }
}
