import type { McpConsoleThroughput } from './mcp-console-records.interface';

/** One request for the chart: when it started and how long it took. */
export interface ThroughputSample {
  /** Start, in epoch milliseconds. */
  at: number;
  /** Duration in milliseconds. */
  durationMs: number;
  /** Whether the exchange failed (a JSON-RPC error, an `isError` result or an HTTP status of 400 and up). */
  failed?: boolean;
}

/**
 * Buckets samples into `minutes` one-minute slots from `start` (epoch ms, a minute boundary):
 * the count and the failures per minute and the median and 95th percentile (nearest rank) of
 * the durations.
 * Samples outside the window are ignored.
 */
export function throughputOf(
  samples: readonly ThroughputSample[],
  start: number,
  minutes: number,
  truncated = false,
): McpConsoleThroughput {
  const buckets: number[][] = Array.from({ length: minutes }, () => []);
  const errors: number[] = new Array<number>(minutes).fill(0);
  for (const sample of samples) {
    const slot = Math.floor((sample.at - start) / 60_000);
    if (slot < 0 || slot >= minutes) continue;
    buckets[slot].push(sample.durationMs);
    if (sample.failed) errors[slot]++;
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
  return { t, count, errors, p50, p95, truncated };
}

/** The nearest-rank percentile of sorted values, or null when there are none. */
export function nearestRank(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[rank - 1];
}

/** Whether an audit row is a failure: a JSON-RPC error, an `isError` tool result or an HTTP status of 400 and up. */
export function isFailedEvent(row: { errorCode: number | null; isError: boolean; status: number | null }): boolean {
  return row.errorCode !== null || row.isError || (row.status !== null && row.status >= 400);
}
