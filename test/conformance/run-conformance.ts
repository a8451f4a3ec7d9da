/**
 * `npm run conformance`: the official MCP conformance suites against this module.
 *
 * Boots the fixture app (test/conformance/fixture-app, SQLite in a temp dir) behind a loopback
 * proxy that adds the bearer token, then runs, through `npx -p node@22` (the conformance CLI
 * needs Node >= 22 and is never a dependency of the project):
 *   server-2025  @modelcontextprotocol/conformance@0.1.16 server --suite all --spec-version 2025-11-25
 *   client-2025  the same release's client scenarios, OAuth (auth/*) ones included, answered by
 *                test/conformance/client (McpClientService)
 *   server-2026  @modelcontextprotocol/conformance@0.2.0-alpha.12 server --suite all --spec-version 2026-07-28
 *   server-2026-tasks  that release's 10 tasks-extension server scenarios (--force, one run each)
 *                against the fixture's tasks mount
 *   client-2026  that release's 2026-07-28 client scenarios, OAuth ones included, and its OAuth
 *                extension scenarios (--force)
 * each against test/conformance/expected-failures-<suite>.yml. Exits non-zero on a failure that
 * is not listed, on a listed scenario that passes (stale entry), or on a suite that overruns its
 * time cap. Every process it starts runs in its own process group and is killed on the way out,
 * Ctrl-C included.
 *
 * Options: --suite <id>[,<id>...] (server-2025, client-2025, server-2026, server-2026-tasks, client-2026),
 *          --concurrency <n> (client scenarios run side by side; default 2, or
 *          CONFORMANCE_CONCURRENCY), --verbose (stream the CLI output), --keep (keep the temp dir).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readExpectedFailures } from './harness/expected-failures';
import { startLoopbackProxy, type LoopbackProxy } from './harness/loopback-proxy';
import { killAll, start, stop, waitWithDeadline, type Started } from './harness/processes';
import { outcomes, readChecks, verdict, type ScenarioOutcome, type SuiteVerdict } from './harness/results';
import { SUITES, type Invocation, type Suite } from './harness/suites';
import { FIXTURE_TASKS_PATH } from './fixture-app/fixture-paths';

const ROOT = resolve(__dirname, '..', '..');
const HERE = join(ROOT, 'test', 'conformance');
/** Runs the fixture app and the client with their transpiled files cached on disk (see the file). */
const TS_REGISTER = join(ROOT, 'test', 'support', 'ts-register.js');
const FIXTURE_READY_MARKER = 'CONFORMANCE_FIXTURE_LISTENING';
const FIXTURE_BOOT_MS = 60_000;
const NPX_RESOLVE_MS = 180_000;

interface Options {
  suites: Suite[];
  verbose: boolean;
  keep: boolean;
  /** Client scenarios run side by side (`--concurrency`, or CONFORMANCE_CONCURRENCY). */
  concurrency: number;
}

interface SuiteReport {
  suite: Suite;
  verdict: SuiteVerdict;
  results: ScenarioOutcome[];
  reasons: Map<string, string>;
  timedOut: boolean;
  cliFailures: string[];
  /** Scenarios run a second time after failing on a wall-clock warning alone, and how that went. */
  reruns: string[];
  ok: boolean;
  /** How long the suite ran (set once it is over). */
  seconds?: number;
}

function parseOptions(argv: string[]): Options {
  let ids = SUITES.map((suite) => suite.id as string);
  let verbose = false;
  let keep = false;
  let concurrency = Number(process.env.CONFORMANCE_CONCURRENCY || 2);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--verbose') verbose = true;
    else if (arg === '--concurrency' || arg.startsWith('--concurrency='))
      concurrency = Number(arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i]);
    else if (arg === '--keep') keep = true;
    else if (arg === '--suite' || arg.startsWith('--suite=')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      ids = (value ?? '')
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean);
    } else throw new Error(`Unknown option ${arg} (use --suite <ids>, --concurrency <n>, --verbose, --keep)`);
  }
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new Error(`--concurrency (or CONFORMANCE_CONCURRENCY) must be a positive integer, not ${concurrency}`);
  const unknown = ids.filter((id) => !SUITES.some((suite) => suite.id === id));
  if (unknown.length || !ids.length)
    throw new Error(`Unknown suite ${unknown.join(', ')}; suites: ${SUITES.map((s) => s.id).join(', ')}`);
  return { suites: SUITES.filter((suite) => ids.includes(suite.id)), verbose, keep, concurrency };
}

function npx(pkg: string, args: string[]): string[] {
  return ['npx', '--prefer-offline', '-y', '-p', 'node@22', '-p', pkg, ...args];
}

/**
 * The PATH under which `conformance` of `pkg` runs on Node 22, per package: npx is asked for it
 * once, and every invocation then starts the CLI directly (npx itself costs a second or two of
 * CPU per start, and a client suite starts the CLI once per scenario).
 */
const cliPaths = new Map<string, string>();

/** Marks the line on which npx's shell prints its PATH. */
const PATH_MARKER = 'CONFORMANCE_CLI_PATH=';

/** The conformance CLI of `pkg` with `args`, and the environment it runs in. */
function conformanceCli(pkg: string, args: string[]): { argv: string[]; env: NodeJS.ProcessEnv } {
  const path = cliPaths.get(pkg);
  if (path === undefined) throw new Error(`${pkg} was not resolved`);
  return { argv: ['conformance', ...args], env: { ...process.env, PATH: path } };
}

function tail(file: string, lines = 40): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no output)';
  }
}

/**
 * Fetches (or finds in the npx cache) a conformance release and Node 22, checks that the CLI
 * runs, and records the PATH npx runs it under; fails early with the reason.
 */
async function resolvePackage(pkg: string, workdir: string): Promise<void> {
  const logFile = join(workdir, `npx-${pkg.replace(/[^a-z0-9.]+/gi, '_')}.log`);
  let path = '';
  const run = start(npx(pkg, ['-c', `conformance --version && node -p '"${PATH_MARKER}" + process.env.PATH'`]), {
    cwd: ROOT,
    logFile,
    onLine: (line) => {
      if (line.startsWith(PATH_MARKER)) path = line.slice(PATH_MARKER.length).trim();
    },
  });
  const code = await waitWithDeadline(run, NPX_RESOLVE_MS);
  if (code !== 0) throw new Error(`Could not run ${pkg} through npx (exit ${code}):\n${tail(logFile)}`);
  if (!path) throw new Error(`npx did not say where ${pkg} runs:\n${tail(logFile)}`);
  cliPaths.set(pkg, path);
}

async function startFixture(workdir: string, token: string): Promise<{ fixture: Started; url: string }> {
  const logFile = join(workdir, 'fixture-app.log');
  let resolveUrl: (url: string) => void = () => undefined;
  const ready = new Promise<string>((resolveReady) => (resolveUrl = resolveReady));
  const fixture = start([process.execPath, '-r', TS_REGISTER, join(HERE, 'fixture-app', 'main.ts')], {
    cwd: ROOT,
    logFile,
    env: {
      ...process.env,
      CONFORMANCE_TOKEN: token,
      CONFORMANCE_DB_FILE: join(workdir, 'fixture.sqlite'),
      PORT: '0',
    },
    onLine: (line) => {
      if (line.startsWith(FIXTURE_READY_MARKER)) resolveUrl(line.slice(FIXTURE_READY_MARKER.length).trim());
    },
  });
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    ready,
    fixture.exited.then((code) => ({ exited: code })),
    new Promise<'timeout'>((resolveTimeout) => (timer = setTimeout(() => resolveTimeout('timeout'), FIXTURE_BOOT_MS))),
  ]);
  clearTimeout(timer);
  if (typeof outcome !== 'string' || outcome === 'timeout') {
    await stop(fixture, 500);
    throw new Error(
      `The fixture app did not start (${outcome === 'timeout' ? 'timeout' : `exit ${String((outcome as { exited: unknown }).exited)}`}):\n${tail(logFile)}`,
    );
  }
  return { fixture, url: outcome };
}

function scenariosFromLog(logFile: string): string[] {
  const found: string[] = [];
  for (const match of tail(logFile, 100_000).matchAll(/^=== Running scenario: (\S+) ===$/gm)) found.push(match[1]);
  return found;
}

async function runSuite(
  suite: Suite,
  options: Options,
  workdir: string,
  serverUrl: string,
  tasksServerUrl: string,
  clientCommand: string,
): Promise<SuiteReport> {
  const resultsDir = join(workdir, 'results', suite.id);
  const expectedFailuresFile = join(HERE, `expected-failures-${suite.id}.yml`);
  const expected = readExpectedFailures(expectedFailuresFile, suite.mode);
  const reasons = new Map(expected.map((entry) => [entry.scenario, entry.reason]));
  const deadline = Date.now() + suite.budgetMs;
  const scenarios: string[] = [];
  /** By invocation label: a later run of the same scenarios replaces what an earlier one left. */
  const cliFailures = new Map<string, string>();
  let timedOut = false;
  console.log(`\n--- ${suite.id}: ${suite.title}`);
  const context = { serverUrl, tasksServerUrl, clientCommand, resultsDir, expectedFailuresFile };
  const invocations = suite.invocations(context);
  const runOne = async (invocation: Invocation, index: number | string): Promise<string[]> => {
    const logFile = join(workdir, `${suite.id}-${index}.log`);
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      timedOut = true;
      return invocation.scenarios ?? [];
    }
    const cli = conformanceCli(suite.pkg, invocation.args);
    const run = start(cli.argv, { cwd: ROOT, env: cli.env, logFile, echo: options.verbose });
    const code = await waitWithDeadline(run, remaining);
    const label = invocation.scenarios?.join(',') ?? suite.id;
    if (code === 'timeout') {
      timedOut = true;
      cliFailures.set(label, `${label}: stopped after the suite's ${suite.budgetMs / 1000}s cap`);
    } else if (code !== 0)
      cliFailures.set(label, `${label}: the conformance CLI exited with ${code} (log: ${logFile})`);
    else cliFailures.delete(label);
    return invocation.scenarios ?? scenariosFromLog(logFile);
  };
  // Client scenarios are one CLI run each, with its own servers on ports of their own: a few run
  // side by side (most of a run is process start-up and waiting on loopback).
  const width = suite.mode === 'client' ? options.concurrency : 1;
  const found: string[][] = new Array(invocations.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, invocations.length) }, async () => {
      while (next < invocations.length) {
        const index = next++;
        found[index] = await runOne(invocations[index], index);
      }
    }),
  );
  scenarios.push(...found.flat());
  const results = outcomes(scenarios, readChecks(resultsDir, suite.mode));
  // A client scenario that failed on a wall-clock warning alone runs once more, into results of
  // its own; its second outcome is the one that counts (see TIMING_CHECKS).
  const reruns: string[] = [];
  const rerunDir = `${resultsDir}-rerun`;
  const again = suite.mode === 'client' ? suite.invocations({ ...context, resultsDir: rerunDir }) : [];
  for (const [at, result] of results.entries()) {
    if (!result.timingOnly || reasons.has(result.scenario)) continue;
    const index = again.findIndex((run) => run.scenarios?.length === 1 && run.scenarios[0] === result.scenario);
    if (index < 0) continue;
    await runOne(again[index], `${index}-rerun`);
    const [second] = outcomes([result.scenario], readChecks(rerunDir, suite.mode));
    results[at] = second;
    reruns.push(
      `${result.scenario}: failed on a timing warning (${result.problems.join('; ')}); run again: ${second.failed ? 'failed' : 'passed'}`,
    );
  }
  const suiteVerdict = verdict(results, expected);
  // The CLI applies the same list itself: it exits non-zero on a regression or a stale entry,
  // and on anything else that went wrong, so its exit code counts as well as our own reading.
  const ok =
    !timedOut && cliFailures.size === 0 && suiteVerdict.unexpected.length === 0 && suiteVerdict.stale.length === 0;
  return {
    suite,
    verdict: suiteVerdict,
    results,
    reasons,
    timedOut,
    cliFailures: [...cliFailures.values()],
    reruns,
    ok,
  };
}

/** One suite's totals; `detailed` adds each expected failure with its reason. */
function printReport(report: SuiteReport, detailed: boolean): void {
  const { verdict: v, suite } = report;
  const line = `${suite.id}: ${v.passed.length} passed, ${v.failed.length} failed (${v.expected.length} expected, ${v.unexpected.length} unexpected), ${v.stale.length} stale`;
  const took = report.seconds === undefined ? '' : ` (${report.seconds}s)`;
  console.log(`${report.ok ? 'OK  ' : 'FAIL'} ${line}${took}${report.timedOut ? ' [TIME CAP REACHED]' : ''}`);
  const byName = new Map(report.results.map((result) => [result.scenario, result]));
  for (const scenario of v.unexpected) {
    console.log(`       unexpected failure: ${scenario}`);
    for (const problem of byName.get(scenario)?.problems.slice(0, 5) ?? []) console.log(`         - ${problem}`);
  }
  for (const scenario of v.stale)
    console.log(`       stale entry (passes now, remove it from expected-failures-${suite.id}.yml): ${scenario}`);
  if (detailed) {
    for (const scenario of v.expected)
      console.log(`       expected failure: ${scenario} -- ${report.reasons.get(scenario)}`);
  }
  for (const rerun of report.reruns) console.log(`       ran again: ${rerun}`);
  for (const failure of report.cliFailures) console.log(`       ${failure}`);
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const started = Date.now();
  const workdir = mkdtempSync(join(tmpdir(), 'durable-mcp-conformance-'));
  let fixture: Started | undefined;
  let proxy: LoopbackProxy | undefined;
  let success = false;

  const cleanup = async () => {
    await proxy?.close().catch(() => undefined);
    if (fixture) await stop(fixture, 3000);
    killAll();
    if (success && !options.keep) rmSync(workdir, { recursive: true, force: true });
    else console.log(`Logs and results kept in ${workdir}`);
  };
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      if (interrupted) return;
      interrupted = true;
      console.error(`\n${signal}: stopping every process the conformance run started`);
      killAll();
      void cleanup().finally(() => process.exit(130));
    });
  }

  try {
    const clientCommand = [process.execPath, '-r', TS_REGISTER, join(HERE, 'client', 'conformance-client.ts')];
    if (clientCommand.some((part) => /\s/.test(part))) {
      throw new Error(
        `The conformance CLI splits --command on spaces; move the checkout to a path without spaces (${clientCommand.join(' ')})`,
      );
    }
    const packages = [...new Set(options.suites.map((suite) => suite.pkg))];
    console.log(`Conformance run in ${workdir}; resolving ${packages.join(', ')} through npx (node@22)`);
    await Promise.all(packages.map((pkg) => resolvePackage(pkg, workdir)));

    const token = randomBytes(24).toString('base64url');
    const booted = await startFixture(workdir, token);
    fixture = booted.fixture;
    proxy = await startLoopbackProxy(new URL(booted.url).origin, token);
    const serverUrl = `${proxy.origin}${new URL(booted.url).pathname}`;
    const tasksServerUrl = `${proxy.origin}${FIXTURE_TASKS_PATH}`;
    console.log(
      `Fixture app at ${booted.url}, proxied (with the bearer token) at ${serverUrl} (tasks mount: ${tasksServerUrl})`,
    );

    const reports: SuiteReport[] = [];
    for (const suite of options.suites) {
      const suiteStarted = Date.now();
      const report = await runSuite(suite, options, workdir, serverUrl, tasksServerUrl, clientCommand.join(' '));
      report.seconds = Math.round((Date.now() - suiteStarted) / 1000);
      printReport(report, true);
      reports.push(report);
    }

    console.log(`\n=== Conformance totals (${Math.round((Date.now() - started) / 1000)}s) ===`);
    for (const report of reports) printReport(report, false);
    success = reports.every((report) => report.ok);
    if (!success)
      console.log(
        '\nConformance FAILED: fix the regression, or update the expected-failures file (with the reason) if the change is intended.',
      );
    return success ? 0 : 1;
  } catch (error) {
    console.error(`Conformance run failed: ${(error as Error)?.stack ?? String(error)}`);
    return 1;
  } finally {
    await cleanup();
  }
}

void main().then((code) => process.exit(code));
