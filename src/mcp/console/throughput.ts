import type { McpConsoleThroughput } from './mcp-console-records.interface';

/** One request for the chart: when it started and how long it took. */
export interface ThroughputSample {
  /** Start, in epoch milliseconds. */
  at: number;
  /** Duration in milliseconds. */
  durationMs: number;
}

/**
 * Buckets samples into `minutes` one-minute slots from `start` (epoch ms, a minute boundary):
 * the count per minute and the median and 95th percentile (nearest rank) of the durations.
 * Samples outside the window are ignored.
 */
export function throughputOf(samples: readonly ThroughputSample[], start: number, minutes: number, truncated = false): McpConsoleThroughput {
  const buckets: number[][] = Array.from({ length: minutes }, () => []);
  for (const sample of samples) {
    const slot = Math.floor((sample.at - start) / 60_000);
    if (slot >= 0 && slot < minutes) buckets[slot].push(sample.durationMs);
  }
  const t: number[] = [];
  const count: number[] = [];
  const p50: (number | null)[] = [];
  const p95: (number | null)[] = [];
  buckets.forEach((durations, i) => {
    durations.sort((a, b) => a - b);
    t.push((start + i * 60_000) / 1000);
    count.push(durations.length);
    p50.push(nearestRank(durations, 0.5));
    p95.push(nearestRank(durations, 0.95));
  });
  return { t, count, p50, p95, truncated };
}

/** The nearest-rank percentile of sorted values, or null when there are none. */
export function nearestRank(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[rank - 1];
}
