/**
 * `npm run bench:server`: tools/call `echo` throughput and latency of (a) a bare node:http echo,
 * (b) the official SDK 1.x stateful Streamable HTTP server and (c) our example app on PostgreSQL,
 * each in its own process on loopback, driven by autocannon at 1 and 32 connections.
 *
 * Environment: BENCH_SECONDS (default 5), BENCH_WARMUP_SECONDS (default 1), BENCH_ROUNDS
 * (default 1; medians are reported), BENCH_PG_URL (the PostgreSQL server a throwaway database
 * is created on). Results go to stdout, progress to stderr. Exits non-zero when a target does
 * not start, a response is wrong or an answered request has no `mcp_events` row; a missed
 * performance target is reported as MISS without failing the run.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { BenchCleanup } from './server/bench.cleanup';
import { loadBenchConfig } from './server/bench.config';
import { createBenchDatabase } from './server/bench.database';
import { formatRatios, formatSummary, summarize } from './server/bench.report';
import { benchTargets } from './server/bench.targets';
import { checkEventRows, type RequestTally } from './server/event-log.check';
import { runLoad, type LoadResult } from './server/load.runner';
import { openMcpSession, type McpBenchSession } from './server/mcp.session';
import { sampleHostBusy } from './server/proc.stats';
import { TargetProcess, freePort } from './server/target.process';
import { measureTarget, type Measurement } from './server/target.measurement';

const repoRoot = join(__dirname, '..');

function progress(text: string): void {
  process.stderr.write(`${text}\n`);
}

function problems(m: LoadResult, label: string, phase: string): string[] {
  if (!m.non2xx && !m.badBodies && !m.errors) return [];
  return [
    `errors ${phase} c${m.connections} ${label}: non-2xx ${m.non2xx}, wrong bodies ${m.badBodies}, connection errors/timeouts ${m.errors}`,
    ...m.samples.map((s) => `  e.g. ${s}`),
  ];
}

async function main(cleanup: BenchCleanup): Promise<number> {
  const config = loadBenchConfig();
  progress(`bench:server: ${config.rounds} round(s), ${config.seconds} s per run after ${config.warmupSeconds} s warm-up, concurrency ${config.concurrencies.join(' and ')}`);

  // The targets share the machine with the load generator and PostgreSQL; anything else running
  // skews every figure, so say so next to the results.
  const idleBusy = await sampleHostBusy(1000);
  const db = await createBenchDatabase(config.pgAdminUrl).catch((error: Error) => {
    const where = new URL(config.pgAdminUrl);
    if (where.password) where.password = '***';
    throw new Error(`could not create the bench database on ${where} (set BENCH_PG_URL to another server): ${error.message}`);
  });
  cleanup.add(`drop database ${db.name}`, () => db.drop());
  progress(`database ${db.name} created`);

  const token = randomBytes(24).toString('base64url');
  const targets: TargetProcess[] = [];
  const sessions = new Map<string, McpBenchSession>();
  for (const spec of benchTargets({ repoRoot, databaseUrl: db.url, token })) {
    const started = Date.now();
    const target = await TargetProcess.start(spec, await freePort(), repoRoot).catch((error: Error) => {
      throw new Error(`target ${spec.key} (${spec.label}) failed to start: ${error.message}`);
    });
    cleanup.add(`stop target ${spec.key}`, () => target.stop());
    targets.push(target);
    const session = await openMcpSession(target.url, spec.token).catch((error: Error) => {
      throw new Error(`target ${spec.key} (${spec.label}) refused the handshake: ${error.message}\n${target.outputTail}`);
    });
    sessions.set(spec.key, session);
    progress(`target ${spec.key} ${spec.label.padEnd(9)} pid ${target.pid} port ${target.port} ready in ${Date.now() - started} ms, session ${session.sessionId.slice(0, 8)}... (${session.protocolVersion})`);
  }

  const runs: Measurement[] = [];
  const errors: string[] = [];
  const tally: RequestTally = { answered: 0, sent: 0 };
  for (let round = 1; round <= config.rounds; round++) {
    for (const connections of config.concurrencies) {
      for (const target of targets) {
        const session = sessions.get(target.spec.key) as McpBenchSession;
        const warmup = await runLoad(target.url, session, connections, config.warmupSeconds);
        const measured = await measureTarget(target, session, connections, config.seconds, db.name);
        if (target.spec.key === 'c') {
          tally.answered += warmup.completed + measured.completed;
          tally.sent += warmup.sent + measured.sent;
        }
        errors.push(...problems(warmup, target.spec.label, `round ${round} warm-up`), ...problems(measured, target.spec.label, `round ${round}`));
        runs.push(measured);
        progress(`  round ${round}  ${formatSummary(summarize([measured]))}`);
      }
    }
  }

  const eventCheck = await checkEventRows(db, tally);
  const summaries = config.concurrencies.flatMap((connections) =>
    targets.map((target) => summarize(runs.filter((m) => m.key === target.spec.key && m.connections === connections))),
  );
  const ratios = formatRatios(summaries, config);

  console.log(`\nbench:server  ${config.rounds} round(s) x ${config.seconds} s, median shown, node ${process.version}, tools/call echo over HTTP on 127.0.0.1`);
  if (idleBusy > 0.15) {
    console.log(`warning: ${Math.round(idleBusy * 100)}% of the CPU was busy with other work before the bench started; the figures are skewed`);
  }
  summaries.forEach((s) => console.log(formatSummary(s)));
  ratios.lines.forEach((line) => console.log(line));
  eventCheck.lines.forEach((line) => console.log(line));
  if (errors.length) errors.forEach((line) => console.log(line));
  else console.log('errors: none (every response was 2xx and the expected echo result)');
  return errors.length || !eventCheck.ok ? 1 : 0;
}

const cleanup = new BenchCleanup();
cleanup.exitOnSignals();
main(cleanup)
  .catch((error: unknown) => {
    console.error(`bench:server failed: ${(error as Error)?.message ?? String(error)}`);
    return 1;
  })
  .then(async (code) => {
    await cleanup.run();
    process.exit(code);
  });
