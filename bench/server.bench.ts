/**
 * `npm run bench:server`: tools/call `echo` throughput, latency and cost of every target in one
 * run, each in its own process on loopback, driven by autocannon at 1 and 32 connections:
 * bare node:http (the floor), the official SDK 1.x and 2.x and mcp-nest 2.x (the peers), and our
 * example app on PostgreSQL three ways (Express, Fastify, asynchronous audit commit), and with
 * BENCH_BASELINE the example app of an earlier commit, built on its own, next to the working tree's.
 *
 * Environment: BENCH_SECONDS (default 5), BENCH_WARMUP_SECONDS (default 1), BENCH_ROUNDS
 * (default 3; medians are reported, the targets take turns within each round), BENCH_TARGETS
 * (comma-separated keys or labels; default all), BENCH_PG_URL (the PostgreSQL server the
 * throwaway databases are created on), BENCH_BASELINE (a git ref to measure as a baseline),
 * BENCH_BASELINE_VARIANTS (the variants of ours run on it; default ours), BENCH_CACHE_DIR (where
 * baseline builds are kept). Results go to stdout, progress to stderr. Exits non-zero
 * when a target does not start, a response is wrong or an answered request has no `mcp_events`
 * row; a missed performance goal is reported as MISS without failing the run.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { runBench, type BenchCleanup } from './server/bench.cleanup';
import { loadBenchConfig } from './server/bench.config';
import { createBenchDatabase, PostgresBackends, type BenchDatabase } from './server/bench.database';
import { describeBaseline, prepareBaseline, type BaselineBuild } from './server/baseline.build';
import {
  formatBaselineRatios,
  type RoundMeasurement,
  formatCeilings,
  formatRatios,
  formatSummary,
  judgeGoals,
  labelWidth,
  summarize,
  summaryHeader,
} from './server/bench.report';
import { benchTargets, type TargetSetup } from './server/bench.targets';
import { checkEventRows, type RequestTally } from './server/event-log.check';
import { runLoad, type LoadResult } from './server/load.runner';
import { openMcpSession, openStatelessCalls, type McpBenchSession } from './server/mcp.session';
import { sampleHostBusy } from './server/proc.stats';
import { TargetProcess, freePort, type TargetSpec } from './server/target.process';
import { measureTarget } from './server/target.measurement';
import { progress } from './support/env';

const repoRoot = join(__dirname, '..');

function problems(m: LoadResult, label: string, phase: string): string[] {
  if (!m.non2xx && !m.badBodies && !m.errors) return [];
  return [
    `errors ${phase} c=${m.connections} ${label}: non-2xx ${m.non2xx}, wrong bodies ${m.badBodies}, connection errors/timeouts ${m.errors}`,
    ...m.samples.map((s) => `  e.g. ${s}`),
  ];
}

/**
 * With BENCH_CPU_PROF, a target of ours, the baseline's and each floor writes
 * `<key>.cpuprofile` into that directory when it exits (a floor's profile is what ours' is read
 * against); summarize it with `bench/cpu-profile.summary.ts`.
 */
function withCpuProfile(spec: TargetSpec, dir: string | undefined): TargetSpec {
  if (!dir || (spec.role !== 'ours' && spec.role !== 'baseline' && spec.role !== 'floor')) return spec;
  const profile = ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${spec.key}.cpuprofile`];
  return { ...spec, nodeArgs: [...(spec.nodeArgs ?? []), ...profile] };
}

/** The same list started `by` places later, so that no target is always measured first or last. */
function rotate<T>(items: T[], by: number): T[] {
  const shift = items.length ? by % items.length : 0;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

/**
 * The order of one round: the targets rotated by the round, each baseline and each audit floor
 * right next to the target of ours it mirrors (after it in odd rounds, before it in even ones), so
 * they are measured back to back under the same noise and their ratio can be read round by round.
 */
function roundOrder(targets: TargetProcess[], round: number): TargetProcess[] {
  const paired = new Set(
    targets.filter((t) => t.spec.mirrors && targets.some((other) => other.spec.key === t.spec.mirrors)),
  );
  const order: TargetProcess[] = [];
  for (const target of rotate(
    targets.filter((t) => !paired.has(t)),
    round - 1,
  )) {
    const twins = [...paired].filter((t) => t.spec.mirrors === target.spec.key);
    if (round % 2) order.push(target, ...twins);
    else order.push(...twins, target);
  }
  return order;
}

function baselineNames(specs: TargetSpec[]): string {
  return specs
    .filter((s) => s.role === 'baseline')
    .map((s) => s.label)
    .join(', ');
}

async function main(cleanup: BenchCleanup): Promise<number> {
  const config = loadBenchConfig();
  progress(
    `bench:server: ${config.rounds} round(s), ${config.seconds} s per run after ${config.warmupSeconds} s warm-up (and ${config.warmupRequests} requests per target first), concurrency ${config.concurrencies.join(' and ')}`,
  );

  // The targets share the machine with the load generator and PostgreSQL; anything else running
  // skews every figure, so say so next to the results.
  const idleBusy = await sampleHostBusy(1000);
  let baseline: BaselineBuild | undefined;
  if (config.baseline) {
    baseline = await prepareBaseline(repoRoot, config.baseline.ref, config.baseline.cacheDir, progress, (dir, stop) =>
      cleanup.add(`stop and remove the unfinished baseline build ${dir}`, async () => {
        await stop();
        rmSync(dir, { recursive: true, force: true });
      }),
    );
  }
  const token = randomBytes(24).toString('base64url');
  const setupWith = (databaseUrls: Record<string, string>): TargetSetup => ({
    repoRoot,
    databaseUrls,
    token,
    baseline: baseline && config.baseline && { ...baseline, variants: config.baseline.variants },
  });
  const wanted = benchTargets(setupWith({}), config.only);

  const backends = await PostgresBackends.connect(config.pgAdminUrl).catch((error: Error) => {
    const where = new URL(config.pgAdminUrl);
    if (where.password) where.password = '***';
    throw new Error(
      `could not connect to PostgreSQL at ${where.href} (set BENCH_PG_URL to another server): ${error.message}`,
    );
  });
  cleanup.add('close the PostgreSQL admin connection', () => backends.close());
  // One database per target of ours, so each one's PostgreSQL CPU and audit rows are its own.
  const databases = new Map<string, BenchDatabase>();
  for (const spec of wanted.filter((t) => t.database)) {
    const db = await createBenchDatabase(config.pgAdminUrl);
    cleanup.add(`drop database ${db.name}`, () => db.drop());
    databases.set(spec.key, db);
    progress(`database ${db.name} created for ${spec.label}`);
  }
  const databaseUrls = Object.fromEntries([...databases].map(([key, db]) => [key, db.url]));

  const targets: TargetProcess[] = [];
  const sessions = new Map<string, McpBenchSession>();
  const notes = new Map<string, string>();
  for (const listed of benchTargets(setupWith(databaseUrls), config.only)) {
    const spec = withCpuProfile(listed, config.cpuProfileDir);
    const started = Date.now();
    const target = await TargetProcess.start(spec, await freePort(), spec.cwd ?? repoRoot).catch((error: Error) => {
      throw new Error(`target ${spec.key} (${spec.label}) failed to start: ${error.message}`);
    });
    cleanup.add(`stop target ${spec.key}`, () => target.stop());
    targets.push(target);
    const open = spec.revision === 'stateless' ? openStatelessCalls : openMcpSession;
    const session = await open(target.url, spec.token).catch((error: Error) => {
      throw new Error(
        `target ${spec.key} (${spec.label}) refused the handshake: ${error.message}\n${target.outputTail}`,
      );
    });
    sessions.set(spec.key, session);
    if (spec.note) notes.set(spec.key, spec.note);
    if (spec.env.HTTP_ADAPTER === 'fastify' && session.poweredBy === 'Express') {
      notes.set(spec.key, 'this build of the example app ignores HTTP_ADAPTER: it ran on Express');
    }
    progress(
      `target ${spec.label.padEnd(labelWidth([spec.label]) - 1)} pid ${target.pid} port ${target.port} ready in ${Date.now() - started} ms, ` +
        `${session.sessionId ? `session ${session.sessionId.slice(0, 8)}...` : 'no session'} (${session.protocolVersion})${session.poweredBy ? `, X-Powered-By ${session.poweredBy}` : ''}`,
    );
  }

  const width = labelWidth(targets.map((t) => t.spec.label));
  const runs: RoundMeasurement[] = [];
  const errors: string[] = [];
  const tallies = new Map<string, RequestTally>([...databases.keys()].map((key) => [key, { answered: 0, sent: 0 }]));
  /** Adds a run's requests to the target's tally, which its audit rows are checked against. */
  const count = (key: string, ...loads: LoadResult[]) => {
    const tally = tallies.get(key);
    if (!tally) return;
    for (const load of loads) {
      tally.answered += load.completed;
      tally.sent += load.sent;
    }
  };
  if (config.warmupRequests > 0) {
    // The JIT's warm-up: the same number of calls for every target, fast or slow, before any is measured.
    const connections = Math.max(...config.concurrencies);
    for (const target of targets) {
      const { key, label } = target.spec;
      const warmup = await runLoad(target.url, sessions.get(key) as McpBenchSession, connections, {
        requests: config.warmupRequests,
      });
      count(key, warmup);
      errors.push(...problems(warmup, label, 'JIT warm-up'));
      progress(
        `  warm-up ${label}: ${warmup.completed} requests at c=${connections} in ${warmup.seconds.toFixed(1)} s`,
      );
    }
  }
  for (let round = 1; round <= config.rounds; round++) {
    for (const connections of config.concurrencies) {
      for (const target of roundOrder(targets, round)) {
        const { key, label } = target.spec;
        const session = sessions.get(key) as McpBenchSession;
        const db = databases.get(key);
        const warmup = await runLoad(target.url, session, connections, config.warmupSeconds);
        const measured = await measureTarget(
          target,
          session,
          connections,
          config.seconds,
          db ? () => backends.pids(db.name) : null,
        );
        count(key, warmup, measured);
        errors.push(
          ...problems(warmup, label, `round ${round} warm-up`),
          ...problems(measured, label, `round ${round}`),
        );
        runs.push({ ...measured, round });
        progress(`  round ${round}  ${formatSummary(summarize(target.spec, [measured]), width)}`);
      }
    }
  }

  const eventLines: string[] = [];
  let eventsOk = true;
  for (const [key, db] of databases) {
    const spec = targets.find((t) => t.spec.key === key)?.spec;
    const setupRows = sessions.get(key)?.setupRows ?? 0;
    const check = await checkEventRows(db, tallies.get(key) as RequestTally, spec?.label ?? key, setupRows);
    eventLines.push(...check.lines);
    eventsOk &&= check.ok;
  }
  const summaries = config.concurrencies.flatMap((connections) =>
    targets.map((target) =>
      summarize(
        target.spec,
        runs.filter((m) => m.key === target.spec.key && m.connections === connections),
      ),
    ),
  );
  const specs = targets.map((t) => t.spec);
  const verdicts = judgeGoals(summaries, config, notes, runs);

  console.log(
    `\nbench:server  ${config.rounds} round(s) x ${config.seconds} s per target and concurrency, medians, node ${process.version}, tools/call echo over HTTP on 127.0.0.1`,
  );
  console.log(
    'same work everywhere: one echo tool, one stateful 2025-11-25 session (Mcp-Session-Id) shared by all connections, ' +
      'JSON responses (no SSE), one Node process per target, loopback, autocannon checks every response body',
  );
  if (specs.some((s) => s.revision === 'stateless')) {
    console.log(
      'except ours-stateless(pg): the same app on the defaults driven with stateless 2026-07-28 calls (the envelope in params._meta, no session)',
    );
  }
  console.log(
    `bearer token checked by: ${
      specs
        .filter((s) => s.checksToken)
        .map((s) => s.label)
        .join(', ') || 'none'
    }; not checked by: ${
      specs
        .filter((s) => !s.checksToken)
        .map((s) => s.label)
        .join(', ') || 'none'
    }`,
  );
  console.log(
    `not the same: only ours persists sessions; ours and the audit floors (floor targets labelled (pg)) write an audit row per request to PostgreSQL (pg column); ` +
      `the peers keep sessions in process memory and log nothing`,
  );
  if (baseline) {
    console.log(
      `baseline ${describeBaseline(baseline)}: ${baselineNames(specs)}, the example app of that commit built from its own package-lock.json, in the same environment as ours`,
    );
  }
  if (idleBusy > 0.15) {
    console.log(
      `warning: ${Math.round(idleBusy * 100)}% of the CPU was busy with other work before the bench started; the figures are skewed`,
    );
  }
  for (const [key, note] of notes) console.log(`note ${specs.find((s) => s.key === key)?.label ?? key}: ${note}`);
  console.log(summaryHeader(width));
  summaries.forEach((s) => console.log(formatSummary(s, width)));
  formatRatios(summaries, config).forEach((line) => console.log(line));
  formatCeilings(summaries, config, runs).forEach((line) => console.log(line));
  formatBaselineRatios(summaries, config, runs).forEach((line) => console.log(line));
  verdicts.forEach((v) => console.log(v.line));
  const passed = verdicts.filter((v) => v.pass).length;
  const beyondFloor = verdicts.filter((v) => !v.pass && v.floorMisses).length;
  console.log(
    `goals: ${passed} of ${verdicts.length} PASS` +
      (beyondFloor
        ? `; ${beyondFloor} of the ${verdicts.length - passed} MISS the floor with no framework misses too ` +
          '(out of reach of any server that commits a row before it answers, on this machine in this run)'
        : ''),
  );
  eventLines.forEach((line) => console.log(line));
  if (errors.length) errors.forEach((line) => console.log(line));
  else console.log('errors: none (every response was 2xx and the expected echo result)');
  return errors.length || !eventsOk ? 1 : 0;
}

runBench('bench:server', main);
