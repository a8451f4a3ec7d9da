/**
 * `npm run bench:replicas`: the scaling curve of the example app over 1, 2 and 4 replicas. Each
 * replica (`dist/main.js`) runs as its own process in its own network namespace (`ip netns`, made
 * here and removed at the end, also on Ctrl-C), and reaches PostgreSQL and Redis only through a
 * TCP proxy in the root namespace that delays every chunk by BENCH_DELAY_MS each way. The load
 * (plain keep-alive HTTP, `tools/call echo`) is spread over the replicas by session, and a share
 * of every session's requests goes to a replica other than the one that opened it. Prints per
 * replica count req/s, p50/p99, CPU per request of each replica, of PostgreSQL, of the proxy and
 * of the load generator, the efficiency against one replica, then the CPU model of where it
 * saturates and what it predicts for N machines, and checks that every answered request has its
 * `mcp_events` row.
 *
 * Environment: BENCH_SECONDS (default 10), BENCH_WARMUP_SECONDS (2), BENCH_REPLICAS ("1,2,4"),
 * BENCH_CONCURRENCY (32), BENCH_SESSIONS (the concurrency), BENCH_ELSEWHERE (0.25),
 * BENCH_DELAY_MS (1), BENCH_PG_URL, BENCH_REDIS_URL. Must run as root (network namespaces).
 * Results go to stdout, progress to stderr.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { MCP_ENTITIES, MCP_MIGRATIONS } from '../src/mcp';
import { BenchCleanup } from './server/bench.cleanup';
import { createBenchDatabase, PostgresBackends, type BenchDatabase } from './server/bench.database';
import { checkEventRows } from './server/event-log.check';
import { openMcpSession } from './server/mcp.session';
import { cpuSince, readCpuMs, readCpuOfPids, readHostCpu } from './server/proc.stats';
import { TargetProcess, type TargetSpec } from './server/target.process';
import { assertNetnsUsable, createNamespace, removeNamespace, removeStaleNamespaces } from './replicas/netns';
import type { BenchNamespace } from './replicas/netns';
import { runSessionLoad, type HomedSession, type SessionLoadResult } from './replicas/session.load';
import { progress } from './support/env';

const repoRoot = join(__dirname, '..');
const APP_PORT = 3000;
const PG_PROXY_PORT = 15432;
const REDIS_PROXY_PORT = 16379;

function number(name: string, fallback: number, check: (value: number) => boolean, what: string): number {
  const text = process.env[name]?.trim();
  if (!text) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || !check(value)) throw new Error(`${name}="${text}" is not ${what}`);
  return value;
}

/** The run's settings, read from the environment; a malformed value names its variable. */
function settings() {
  const positive = (v: number) => v > 0;
  const positiveInteger = (v: number) => Number.isInteger(v) && v > 0;
  const replicasText = process.env.BENCH_REPLICAS?.trim() || '1,2,4';
  const replicas = replicasText.split(',').map((part) => Number(part.trim()));
  if (!replicas.length || replicas.some((n) => !Number.isInteger(n) || n < 1 || n > 16)) {
    throw new Error(`BENCH_REPLICAS="${replicasText}" is not a list of replica counts from 1 to 16 (example: 1,2,4)`);
  }
  if (replicas[0] !== 1) throw new Error('BENCH_REPLICAS must start with 1: the efficiency is measured against it');
  const concurrency = number('BENCH_CONCURRENCY', 32, positiveInteger, 'a positive integer');
  return {
    seconds: number('BENCH_SECONDS', 10, positive, 'a positive number'),
    warmupSeconds: number('BENCH_WARMUP_SECONDS', 2, (v) => v >= 0, 'a number of seconds (0 or more)'),
    replicas: [...new Set(replicas)].sort((a, b) => a - b),
    concurrency,
    sessions: number('BENCH_SESSIONS', concurrency, positiveInteger, 'a positive integer'),
    elsewhere: number('BENCH_ELSEWHERE', 0.25, (v) => v >= 0 && v <= 1, 'a share from 0 to 1'),
    delayMs: number('BENCH_DELAY_MS', 1, (v) => v >= 0, 'a delay in ms (0 or more)'),
    pgAdminUrl:
      process.env.BENCH_PG_URL?.trim() || process.env.TEST_PG_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test',
    redisUrl: process.env.BENCH_REDIS_URL?.trim() || process.env.TEST_REDIS_URL?.trim() || 'redis://127.0.0.1:6379',
  };
}

/** The delay proxy, a child process listening on every namespace's root-side address. */
async function startProxy(delayMs: number, routes: string[]): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      '-r',
      'ts-node/register/transpile-only',
      join(__dirname, 'replicas', 'delay.proxy.ts'),
      String(delayMs),
      ...routes,
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
  );
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString('utf8').includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the delay proxy exited (code ${code}): ${output.trim()}`)));
  });
  return child;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (child.connected) child.disconnect();
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

function replicaSpec(
  index: number,
  ns: BenchNamespace,
  db: BenchDatabase,
  token: string,
  redis: URL,
  prefix: string,
): TargetSpec {
  const pgUrl = new URL(db.url);
  pgUrl.hostname = ns.hostAddress;
  pgUrl.port = String(PG_PROXY_PORT);
  const redisUrl = new URL(redis.toString());
  redisUrl.hostname = ns.hostAddress;
  redisUrl.port = String(REDIS_PROXY_PORT);
  return {
    key: `replica-${index + 1}`,
    label: `replica ${index + 1} (${ns.name})`,
    role: 'ours',
    checksToken: true,
    database: true,
    args: [join('dist', 'main.js')],
    env: {
      DATABASE_URL: pgUrl.toString(),
      REDIS_URL: redisUrl.toString(),
      REDIS_PREFIX: prefix,
      MCP_TOKENS: `bench=${token}`,
      HTTP_ADAPTER: undefined,
      AUDIT_COMMIT: undefined,
      RETENTION_EVENTS_MS: undefined,
      RETENTION_SESSIONS_MS: undefined,
      OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
      METRICS_PORT: undefined,
    },
    readyTimeoutMs: 90_000,
    token,
    host: ns.address,
    launcher: ['ip', 'netns', 'exec', ns.name],
  };
}

/** One replica count's measurement. */
interface Step {
  replicas: number;
  load: SessionLoadResult;
  /** CPU µs per correct response, of each replica. */
  replicaUs: number[];
  pgUs: number;
  proxyUs: number;
  loadgenUs: number;
  hostBusy: number;
}

const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const pad = (text: string, width: number) => text.padStart(width);

async function main(cleanup: BenchCleanup): Promise<number> {
  const config = settings();
  await assertNetnsUsable();
  const stale = await removeStaleNamespaces();
  if (stale.length) progress(`removed namespaces of an earlier run: ${stale.join(', ')}`);
  const token = randomBytes(24).toString('base64url');
  const prefix = `dmcp-bench-${randomBytes(4).toString('hex')}`;
  const redis = new URL(config.redisUrl);
  const pgUpstream = new URL(config.pgAdminUrl);
  const cores = availableParallelism();

  const db = await createBenchDatabase(config.pgAdminUrl);
  cleanup.add(`drop database ${db.name}`, () => db.drop());
  const migrations = new DataSource({
    type: 'postgres',
    url: db.url,
    entities: MCP_ENTITIES,
    migrations: MCP_MIGRATIONS,
  });
  await migrations.initialize();
  await migrations.runMigrations();
  await migrations.destroy();
  progress(`database ${db.name} created and migrated; Redis key prefix ${prefix}`);

  const most = config.replicas[config.replicas.length - 1];
  const namespaces: BenchNamespace[] = [];
  for (let i = 0; i < most; i++) {
    const ns = await createNamespace(i + 1);
    cleanup.add(`remove namespace ${ns.name}`, () => removeNamespace(ns.name));
    namespaces.push(ns);
  }
  progress(`namespaces: ${namespaces.map((ns) => `${ns.name} (${ns.address})`).join(', ')}`);

  const upstreamPg = `${pgUpstream.hostname || '127.0.0.1'}:${pgUpstream.port || '5432'}`;
  const upstreamRedis = `${redis.hostname || '127.0.0.1'}:${redis.port || '6379'}`;
  const proxy = await startProxy(
    config.delayMs,
    namespaces.flatMap((ns) => [
      `${ns.hostAddress}:${PG_PROXY_PORT}=${upstreamPg}`,
      `${ns.hostAddress}:${REDIS_PROXY_PORT}=${upstreamRedis}`,
    ]),
  );
  cleanup.add('stop the delay proxy', () => stopProcess(proxy));
  progress(
    `delay proxy (pid ${proxy.pid}): ${config.delayMs} ms each way to PostgreSQL ${upstreamPg} and Redis ${upstreamRedis}`,
  );

  const backends = await PostgresBackends.connect(config.pgAdminUrl);
  cleanup.add('close the admin connection', () => backends.close());

  const replicas: TargetProcess[] = [];
  const steps: Step[] = [];
  let answered = 0;
  let sent = 0;
  let setupRows = 0;
  let failed = false;
  for (const count of config.replicas) {
    while (replicas.length < count) {
      const index = replicas.length;
      const started = TargetProcess.start(
        replicaSpec(index, namespaces[index], db, token, redis, prefix),
        APP_PORT,
        repoRoot,
      );
      const replica = await started;
      cleanup.add(`stop replica ${index + 1}`, () => replica.stop());
      replicas.push(replica);
      progress(`replica ${index + 1} up: pid ${replica.pid}, ${replica.url}`);
    }
    const endpoints = replicas.map((replica) => ({ url: replica.url }));
    const sessions: HomedSession[] = [];
    for (let k = 0; k < config.sessions; k++) {
      const home = k % count;
      sessions.push({ session: await openMcpSession(endpoints[home].url, token), home });
      setupRows += 2;
    }
    if (config.warmupSeconds > 0) {
      const warm = await runSessionLoad(
        endpoints,
        sessions,
        config.concurrency,
        config.warmupSeconds,
        config.elsewhere,
      );
      answered += warm.completed;
      sent += warm.sent;
    }
    const pidsBefore = await backends.pids(db.name);
    const pgBefore = readCpuOfPids(pidsBefore);
    const replicaBefore = replicas.map((replica) => replica.cpuMs() ?? 0);
    const proxyBefore = readCpuMs(proxy.pid ?? -1) ?? 0;
    const hostBefore = readHostCpu();
    const loadBefore = process.cpuUsage();
    const load = await runSessionLoad(endpoints, sessions, config.concurrency, config.seconds, config.elsewhere);
    const loadCpu = process.cpuUsage(loadBefore);
    const hostAfter = readHostCpu();
    const proxyAfter = readCpuMs(proxy.pid ?? -1) ?? 0;
    const replicaAfter = replicas.map((replica) => replica.cpuMs() ?? 0);
    const pidsAfter = await backends.pids(db.name);
    const pgMs = cpuSince(pgBefore, readCpuOfPids(new Set([...pidsBefore, ...pidsAfter])));
    for (const replica of replicas) replica.assertAlive();
    answered += load.completed;
    sent += load.sent;
    const ok = Math.max(1, load.ok);
    const step: Step = {
      replicas: count,
      load,
      replicaUs: replicaAfter.map((after, i) => ((after - replicaBefore[i]) * 1000) / ok),
      pgUs: (pgMs * 1000) / ok,
      proxyUs: ((proxyAfter - proxyBefore) * 1000) / ok,
      loadgenUs: (loadCpu.user + loadCpu.system) / ok,
      hostBusy: (hostAfter.busy - hostBefore.busy) / Math.max(1, hostAfter.total - hostBefore.total),
    };
    steps.push(step);
    progress(
      `${count} replica(s): ${fixed(load.reqPerSec)} req/s, p50 ${fixed(load.p50Ms, 2)} ms, ${load.okElsewhere} answered by another replica, ${load.failures} failed`,
    );
    if (load.failures) {
      failed = true;
      progress(`failures, e.g.: ${load.samples.join(' | ')}`);
    }
  }
  for (const replica of replicas.reverse()) await replica.stop();
  const rows = await checkEventRows(db, { answered, sent }, 'all replicas', setupRows, 'the load generator');

  const one = steps[0].load.reqPerSec;
  const out: string[] = [];
  out.push(
    `bench:replicas  tools/call echo, ${config.concurrency} loops over ${config.sessions} sessions, ${config.seconds} s per replica count, ` +
      `${Math.round(config.elsewhere * 100)}% of requests sent to a replica other than the session's, ` +
      `PostgreSQL and Redis behind a ${config.delayMs} ms (each way) delay proxy, ${cores} cores, node ${process.version}`,
  );
  out.push(
    'replicas   req/s   p50 ms   p99 ms  elsewhere  cpu µs/req per replica (total)      pg µs/req  proxy µs/req  loadgen µs/req  host busy  efficiency',
  );
  for (const step of steps) {
    const total = step.replicaUs.reduce((sum, us) => sum + us, 0);
    const efficiency = step.load.reqPerSec / (step.replicas * one);
    out.push(
      [
        pad(String(step.replicas), 8),
        pad(fixed(step.load.reqPerSec), 7),
        pad(fixed(step.load.p50Ms, 2), 8),
        pad(fixed(step.load.p99Ms, 2), 8),
        pad(`${fixed((100 * step.load.okElsewhere) / Math.max(1, step.load.ok))}%`, 10),
        `  ${`${step.replicaUs.map((us) => fixed(us)).join(' + ')} (${fixed(total)})`.padEnd(33)}`,
        pad(fixed(step.pgUs), 9),
        pad(fixed(step.proxyUs), 13),
        pad(fixed(step.loadgenUs), 15),
        pad(`${fixed(100 * step.hostBusy)}%`, 10),
        pad(`${fixed(100 * efficiency)}%`, 11),
      ].join(' '),
    );
  }
  out.push(...modelLines(steps, cores, config.concurrency));
  out.push(...rows.lines);
  process.stdout.write(`${out.join('\n')}\n`);
  return failed || !rows.ok ? 1 : 0;
}

/**
 * The CPU model. On this machine every process shares `cores`: the request rate cannot pass
 * cores / (the CPU one request costs in all of them). With one machine per replica (each its own
 * cores) and one PostgreSQL for all, the replicas' part scales with N and PostgreSQL's does not:
 * X(N) = min(N × coresPerMachine / replica CPU per request, pgCores / PostgreSQL CPU per request),
 * and no more than concurrency / latency (Little's law) for a fixed number of clients.
 */
function modelLines(steps: Step[], cores: number, concurrency: number): string[] {
  const lines = ['', 'model: throughput = cores / CPU per request of everything on those cores'];
  for (const step of steps) {
    const replica = step.replicaUs.reduce((sum, us) => sum + us, 0);
    const all = replica + step.pgUs + step.proxyUs + step.loadgenUs;
    const bound = (cores * 1e6) / all;
    lines.push(
      `  ${step.replicas} replica(s): ${fixed(replica)} (replicas) + ${fixed(step.pgUs)} (pg) + ${fixed(step.proxyUs)} (proxy) + ${fixed(step.loadgenUs)} (loadgen) = ${fixed(all)} µs/req; ` +
        `${cores} cores / ${fixed(all)} µs = ${fixed(bound)} req/s bound, measured ${fixed(step.load.reqPerSec)} (${fixed((100 * step.load.reqPerSec) / bound)}% of it), host busy ${fixed(100 * step.hostBusy)}%`,
    );
  }
  const last = steps[steps.length - 1];
  const first = steps[0];
  const saturated = last.hostBusy > 0.9;
  lines.push(
    saturated
      ? `  saturation: at ${last.replicas} replicas the host was ${fixed(100 * last.hostBusy)}% busy: the curve is flat because the ${cores} cores are spent, not because of the replicas; ` +
          `adding a replica on the same cores only adds its fixed cost and contention (CPU per request ${fixed(first.replicaUs.reduce((s, u) => s + u, 0))} -> ${fixed(last.replicaUs.reduce((s, u) => s + u, 0))} µs)`
      : `  saturation: the host was ${fixed(100 * last.hostBusy)}% busy at ${last.replicas} replicas: not CPU-bound; the latency of the delayed link (Little's law: ${concurrency} in flight / p50 ${fixed(last.load.p50Ms, 2)} ms = ${fixed((concurrency * 1000) / last.load.p50Ms)} req/s) limits it`,
  );
  // A replica machine carries the load one replica carried here: its costs are the one-replica
  // run's. PostgreSQL's cost per request grows as the same load is split over more replicas
  // (each batches fewer audit rows per insert), so its ceiling is given for both.
  const replicaUs = first.replicaUs[0];
  const perMachine = 2;
  const pgCores = 2;
  const perReplica = (perMachine * 1e6) / replicaUs;
  const pgCeiling = (pgCores * 1e6) / first.pgUs;
  const pgCeilingSplit = (pgCores * 1e6) / Math.max(first.pgUs, last.pgUs);
  lines.push(
    `prediction for N machines (${perMachine} cores per replica machine, PostgreSQL alone on ${pgCores} cores, the load generated elsewhere): ` +
      `X(N) = min(N × ${perMachine} × 10^6 / ${fixed(replicaUs)} µs, ${pgCores} × 10^6 / pg µs per request) = min(N × ${fixed(perReplica)}, ${fixed(pgCeiling)}) req/s ` +
      `with the one-replica pg cost (${fixed(first.pgUs)} µs)` +
      (steps.length > 1
        ? `, min(N × ${fixed(perReplica)}, ${fixed(pgCeilingSplit)}) with the ${last.replicas}-replica one (${fixed(last.pgUs)} µs)`
        : ''),
  );
  for (const n of [1, 2, 4, 8, 16, 32]) {
    const x = Math.min(n * perReplica, pgCeiling);
    const xSplit = Math.min(n * perReplica, pgCeilingSplit);
    lines.push(
      `  N=${pad(String(n), 2)}: ${pad(fixed(x), 7)} req/s${x === pgCeiling ? ' (PostgreSQL CPU bound)' : '                       '}` +
        (steps.length > 1
          ? `   ${pad(fixed(xSplit), 7)} req/s${xSplit === pgCeilingSplit ? ' (PostgreSQL CPU bound)' : ''}`
          : ''),
    );
  }
  lines.push(
    `  PostgreSQL becomes the shared bottleneck from N = ${Math.ceil(pgCeilingSplit / perReplica)} to ${Math.ceil(pgCeiling / perReplica)} replica machines: ` +
      `its CPU per request (the audit row's insert and commit; sessions come from each replica's cache) sets the ceiling, ` +
      `and the clients must keep enough requests in flight: at p50 ${fixed(first.load.p50Ms, 2)} ms, ${fixed(pgCeiling)} req/s needs about ${fixed((pgCeiling * first.load.p50Ms) / 1000)} at once`,
  );
  return lines;
}

const cleanup = new BenchCleanup();
cleanup.exitOnSignals();
main(cleanup)
  .then(async (code) => {
    await cleanup.run();
    process.exit(code);
  })
  .catch(async (error: Error) => {
    console.error(error.stack ?? error.message);
    await cleanup.run();
    process.exit(1);
  });
