/** Settings of one benchmark run, read from the environment. */
export interface BenchConfig {
  /** Length of each measured run, in seconds (`BENCH_SECONDS`). @default 5 */
  seconds: number;
  /** Length of the warm-up before each measured run, in seconds (`BENCH_WARMUP_SECONDS`). @default 1 */
  warmupSeconds: number;
  /** How many times the whole a,b,c x c=1,c=32 sequence runs; medians are reported (`BENCH_ROUNDS`). @default 1 */
  rounds: number;
  /** The connection counts measured, in order. */
  concurrencies: number[];
  /** The server the throwaway database is created on (`BENCH_PG_URL`, else `TEST_PG_URL`). @default postgres://postgres@127.0.0.1:5432/test */
  pgAdminUrl: string;
  /** The goal at the highest concurrency: ours / SDK throughput at least this. */
  targetRatio: number;
  /** The goal at the highest concurrency: our p99 latency below this, in milliseconds. */
  targetP99Ms: number;
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number, integer: boolean): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`${name}="${raw}" is not a positive ${integer ? 'integer' : 'number'} (example: ${name}=${fallback})`);
  }
  return value;
}

/** Reads the benchmark settings; a malformed value is an error that names the variable. */
export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  return {
    seconds: positive(env, 'BENCH_SECONDS', 5, false),
    warmupSeconds: positive(env, 'BENCH_WARMUP_SECONDS', 1, false),
    rounds: positive(env, 'BENCH_ROUNDS', 1, true),
    concurrencies: [1, 32],
    pgAdminUrl: env.BENCH_PG_URL?.trim() || env.TEST_PG_URL?.trim() || 'postgres://postgres@127.0.0.1:5432/test',
    targetRatio: 2.0,
    targetP99Ms: 20,
  };
}
