/** Latency statistics and PASS/MISS lines for the client benchmark. */

/** p50 and p99 of a sample, in ms. */
export interface Percentiles {
  p50: number;
  p99: number;
  n: number;
}

/** Computes p50/p99 of durations in ms. */
export function percentiles(samples: number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p99: at(0.99), n: sorted.length };
}

/**
 * Calls made on a path before it is measured (`BENCH_WARMUP_CALLS`, default 3000). A call through
 * `McpClientService` is not at its steady speed before V8 has optimised the code it runs: measured
 * here in windows of 300 calls from a fresh app, `callTool`'s p50 fell from 1.2 ms to 0.45 ms over
 * the first 2000 calls, whether or not the app had sat idle for seconds after its start, so it is
 * the number of calls that counts, not the time. Every path of this benchmark gets the same
 * warm-up, the bare transport and the official SDK included.
 */
export const WARMUP_CALLS = Number(process.env.BENCH_WARMUP_CALLS ?? 3000);

/** Runs `fn` `count` times one after the other and returns each duration in ms. */
export async function timeSequential(count: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const durations: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await fn(i);
    durations.push(performance.now() - start);
  }
  return durations;
}

/** One result line: `label  p50 x ms  p99 y ms  (n)`. */
export function latencyLine(label: string, stats: Percentiles): string {
  return `${label.padEnd(44)} p50 ${stats.p50.toFixed(3).padStart(9)} ms   p99 ${stats.p99.toFixed(3).padStart(9)} ms   (n=${stats.n})`;
}

/** One target line: PASS or MISS, what was measured and what was wanted. */
export function targetLine(pass: boolean, text: string): string {
  return `${pass ? 'PASS' : 'MISS'}  ${text}`;
}
