import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ExpectedFailure } from './expected-failures';

/** One check of a scenario, as the conformance CLI writes it to `checks.json`. */
interface Check {
  id: string;
  name: string;
  // The known values, listed for the reader; the runner may report others.
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents -- see above
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string;
  errorMessage?: string;
  details?: { message?: unknown };
}

/** Outcome of one scenario. */
export interface ScenarioOutcome {
  scenario: string;
  /** Like the CLI's baseline check: a FAILURE or a WARNING fails the scenario. */
  failed: boolean;
  /** Short descriptions of the failing checks (or why there is no result at all). */
  problems: string[];
  /** Failed on nothing but WARNINGs of the wall-clock checks in `TIMING_CHECKS`. */
  timingOnly: boolean;
}

/**
 * Checks that time the client by the wall clock and only WARN when it is late within a bound
 * (`client-sse-retry-timing`: a reconnection more than 200 ms after the `retry` the server asked
 * for, and no later than twice it). On a shared, loaded machine the client process can be that
 * late without anything being wrong with it, so a scenario that failed on these warnings alone
 * is run once more (`run-conformance.ts`). Reconnecting too early, or very late, is a FAILURE
 * of the same check and is never run again.
 */
export const TIMING_CHECKS: ReadonlySet<string> = new Set(['client-sse-retry-timing']);

/** Totals of one suite, compared with its expected-failures list. */
export interface SuiteVerdict {
  passed: string[];
  failed: string[];
  expected: string[];
  unexpected: string[];
  /** Listed as expected to fail but passed, or listed and never run. */
  stale: string[];
}

const TIMESTAMP = /-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

/** Reads every `checks.json` under `dir` (the CLI's `-o`): scenario name -> checks. */
export function readChecks(dir: string, mode: 'server' | 'client'): Map<string, Check[]> {
  const byScenario = new Map<string, Check[]>();
  if (!existsSync(dir)) return byScenario;
  const walk = (folder: string, prefix: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      if (!statSync(path).isDirectory()) continue;
      const file = join(path, 'checks.json');
      if (existsSync(file) && TIMESTAMP.test(name)) {
        let scenario = prefix + name.replace(TIMESTAMP, '');
        if (mode === 'server') scenario = scenario.replace(/^server-/, '');
        byScenario.set(scenario, JSON.parse(readFileSync(file, 'utf8')) as Check[]);
      } else {
        walk(path, `${prefix}${name}/`); // scenario names with a slash (auth/...) nest a folder
      }
    }
  };
  walk(dir, '');
  return byScenario;
}

/** Outcome of each scenario that was meant to run; one without a `checks.json` failed to run. */
export function outcomes(scenarios: string[], checks: Map<string, Check[]>): ScenarioOutcome[] {
  return scenarios.map((scenario) => {
    const list = checks.get(scenario);
    if (!list)
      return {
        scenario,
        failed: true,
        problems: ['no result (the scenario crashed, timed out or never ran)'],
        timingOnly: false,
      };
    const bad = list.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING');
    return {
      scenario,
      failed: bad.length > 0,
      timingOnly: bad.length > 0 && bad.every((check) => check.status === 'WARNING' && TIMING_CHECKS.has(check.id)),
      problems: bad.map((check) => {
        const why = check.errorMessage ?? (typeof check.details?.message === 'string' ? check.details.message : '');
        return `${check.status} ${check.name}${why ? `: ${why.replace(/\s+/g, ' ').slice(0, 200)}` : ''}`;
      }),
    };
  });
}

/** Compares outcomes with the expected-failures list. */
export function verdict(results: ScenarioOutcome[], expected: ExpectedFailure[]): SuiteVerdict {
  const listed = new Set(expected.map((entry) => entry.scenario));
  const ran = new Set(results.map((result) => result.scenario));
  const failed = results.filter((result) => result.failed).map((result) => result.scenario);
  return {
    passed: results.filter((result) => !result.failed).map((result) => result.scenario),
    failed,
    expected: failed.filter((scenario) => listed.has(scenario)),
    unexpected: failed.filter((scenario) => !listed.has(scenario)),
    stale: [
      ...results.filter((result) => !result.failed && listed.has(result.scenario)).map((result) => result.scenario),
      ...[...listed].filter((scenario) => !ran.has(scenario)).map((scenario) => `${scenario} (listed, but not run)`),
    ],
  };
}
