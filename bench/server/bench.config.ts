import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OURS_KEYS } from './bench.targets';

/** The performance goals the run reports as PASS or MISS (a MISS does not fail the run). */
export interface BenchGoals {
  /** At c=32: ours(pg) (Express, the default) req/s at least this multiple of each peer's. */
  peerRatio: number;
  /** At c=32: ours-fastify(pg) req/s at least this multiple of each peer's. */
  fastifyPeerRatio: number;
  /** At c=32: ours(pg) server CPU per request at most this multiple of sdk-2.x's. */
  cpuRatioToSdk2: number;
  /** At c=1: ours-async(pg) req/s at least this multiple of each peer's. */
  asyncPeerRatio: number;
  /** At c=1: ours(pg) (synchronous audit commit) p50 at most this multiple of sdk-2.x's p50. */
  p50RatioToSdk2AtOne: number;
  /** At c=1: ours(pg) (Express) server CPU per request and p50 at most this multiple of ours-fastify(pg)'s. */
  adapterSpread: number;
  /** Every target of ours: req/s at least this multiple of its baseline's (BENCH_BASELINE), at every concurrency. */
  baselineFloor: number;
}

/** Settings of one benchmark run, read from the environment. */
export interface BenchConfig {
  /** Length of each measured run, in seconds (`BENCH_SECONDS`). @default 5 */
  seconds: number;
  /** Length of the warm-up before each measured run, in seconds (`BENCH_WARMUP_SECONDS`). @default 1 */
  warmupSeconds: number;
  /**
   * Requests every target answers once, at the highest concurrency, before its first measured
   * run (`BENCH_WARMUP_REQUESTS`; 0 skips it): V8 compiles the hot path after some thousands of
   * calls, and a warm-up counted in seconds gives a slow target fewer of them. @default 5000
   */
  warmupRequests: number;
  /**
   * How many times every target is measured at every concurrency; medians are reported
   * (`BENCH_ROUNDS`). Each round measures the targets one after the other, starting one
   * target later than the round before. @default 3
   */
  rounds: number;
  /** The connection counts measured, in order (`BENCH_CONCURRENCY`, comma-separated). @default [1, 32] */
  concurrencies: number[];
  /**
   * A directory where every target of ours (and the baseline's) writes a V8 CPU profile
   * (`node --cpu-prof`) when it exits (`BENCH_CPU_PROF`); unset profiles nothing.
   */
  cpuProfileDir?: string;
  /** Keys or labels of the targets to run (`BENCH_TARGETS`, comma-separated); empty runs all. */
  only: string[];
  /** The server the throwaway databases are created on (`BENCH_PG_URL`, else `TEST_PG_URL`). @default postgres://postgres@127.0.0.1:5432/test */
  pgAdminUrl: string;
  /** What the run is judged against. */
  goals: BenchGoals;
  /** An earlier commit of this repository measured side by side with the working tree (`BENCH_BASELINE`); unset runs none. */
  baseline?: BaselineConfig;
}

/** Which earlier commit to build and run as a baseline, and how. */
export interface BaselineConfig {
  /** The git ref as given (`BENCH_BASELINE`): a commit, tag or branch. */
  ref: string;
  /** The variants of ours mirrored on the baseline (`BENCH_BASELINE_VARIANTS`, comma-separated keys). @default ['ours'] */
  variants: string[];
  /** Where built baselines are kept between runs (`BENCH_CACHE_DIR`). @default <os temp dir>/durable-mcp-bench */
  cacheDir: string;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
}

function baselineOf(env: NodeJS.ProcessEnv): BaselineConfig | undefined {
  const ref = env.BENCH_BASELINE?.trim();
  if (!ref) return undefined;
  const variants = list(env.BENCH_BASELINE_VARIANTS);
  // Checked before the baseline is built, which can take minutes.
  const unknown = variants.filter((name) => !(OURS_KEYS as readonly string[]).includes(name));
  if (unknown.length) {
    throw new Error(
      `BENCH_BASELINE_VARIANTS names unknown variant(s) ${unknown.join(', ')}; known: ${OURS_KEYS.join(', ')}`,
    );
  }
  return {
    ref,
    variants: variants.length ? variants : ['ours'],
    cacheDir: env.BENCH_CACHE_DIR?.trim() || join(tmpdir(), 'durable-mcp-bench'),
  };
}

function positive(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  integer: boolean,
  zeroAllowed = false,
): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed) || (integer && !Number.isInteger(value))) {
    const kind = zeroAllowed
      ? `${integer ? 'integer' : 'number'} (0 or more)`
      : `positive ${integer ? 'integer' : 'number'}`;
    throw new Error(`${name}="${raw}" is not a ${kind} (example: ${name}=${fallback})`);
  }
  return value;
}

function concurrenciesOf(env: NodeJS.ProcessEnv): number[] {
  const names = list(env.BENCH_CONCURRENCY);
  if (!names.length) return [1, 32];
  return names.map((raw) => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value <= 0)
      throw new Error(
        `BENCH_CONCURRENCY="${env.BENCH_CONCURRENCY}" is not a list of positive integers (example: 1,32)`,
      );
    return value;
  });
}

/** Reads the benchmark settings; a malformed value is an error that names the variable. */
export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  return {
    seconds: positive(env, 'BENCH_SECONDS', 5, false),
    warmupSeconds: positive(env, 'BENCH_WARMUP_SECONDS', 1, false),
    warmupRequests: positive(env, 'BENCH_WARMUP_REQUESTS', 5000, true, true),
    rounds: positive(env, 'BENCH_ROUNDS', 3, true),
    concurrencies: concurrenciesOf(env),
    cpuProfileDir: env.BENCH_CPU_PROF?.trim() || undefined,
    only: list(env.BENCH_TARGETS),
    pgAdminUrl: env.BENCH_PG_URL?.trim() || env.TEST_PG_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test',
    goals: {
      peerRatio: 2.0,
      fastifyPeerRatio: 2.5,
      cpuRatioToSdk2: 0.5,
      asyncPeerRatio: 1.0,
      p50RatioToSdk2AtOne: 1.5,
      adapterSpread: 1.2,
      baselineFloor: 0.95,
    },
    baseline: baselineOf(env),
  };
}
