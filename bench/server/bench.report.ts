import type { BenchConfig } from './bench.config';
import type { Measurement } from './target.measurement';

/** The median of each figure of one target at one concurrency, over the rounds. */
export interface Summary {
  key: string;
  label: string;
  connections: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  rssBytes: number;
  cpuUsPerReq: number;
  pgUsPerReq: number;
  loadUsPerReq: number;
  hostBusy: number;
}

function median(values: number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((x, y) => x - y);
  if (!sorted.length) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Medians per figure of the rounds of one target at one concurrency. */
export function summarize(runs: Measurement[]): Summary {
  const pick = (f: (m: Measurement) => number | null) => median(runs.map((m) => f(m) ?? NaN));
  return {
    key: runs[0].key,
    label: runs[0].label,
    connections: runs[0].connections,
    reqPerSec: pick((m) => m.reqPerSec),
    p50Ms: pick((m) => m.p50Ms),
    p99Ms: pick((m) => m.p99Ms),
    rssBytes: pick((m) => m.rssBytes),
    cpuUsPerReq: pick((m) => m.cpuUsPerReq),
    pgUsPerReq: pick((m) => m.pgUsPerReq),
    loadUsPerReq: pick((m) => m.loadUsPerReq),
    hostBusy: pick((m) => m.hostBusy),
  };
}

/** Milliseconds with as many decimals as make sense for their size. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  return ms >= 10 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(1) : ms.toFixed(2);
}

function formatUs(us: number): string {
  return Number.isFinite(us) ? `${us.toFixed(0)} µs/req` : '-';
}

/** One result line, e.g. `c32  ours(pg)   4120 req/s  p50 7.0 ms  p99 14 ms  rss 120 MB  cpu 410 µs/req ...`. */
export function formatSummary(s: Summary): string {
  const rss = Number.isFinite(s.rssBytes) ? `${Math.round(s.rssBytes / 1048576)} MB` : '-';
  const extra = s.key === 'c' ? `  postgres ${formatUs(s.pgUsPerReq)}` : '';
  return (
    `${`c${s.connections}`.padEnd(4)} ${s.label.padEnd(9)} ${Math.round(s.reqPerSec).toString().padStart(6)} req/s  ` +
    `p50 ${formatMs(s.p50Ms)} ms  p99 ${formatMs(s.p99Ms)} ms  rss ${rss}  ` +
    `cpu ${formatUs(s.cpuUsPerReq)}${extra}  loadgen ${formatUs(s.loadUsPerReq)}  host busy ${Math.round(s.hostBusy * 100)}%`
  );
}

/** The ratio lines and the verdict on the goal at the highest concurrency. */
export function formatRatios(summaries: Summary[], config: BenchConfig): { lines: string[]; pass: boolean } {
  const lines: string[] = [];
  const find = (key: string, connections: number) => summaries.find((s) => s.key === key && s.connections === connections);
  for (const connections of config.concurrencies) {
    const [a, b, c] = ['a', 'b', 'c'].map((key) => find(key, connections));
    if (!a || !b || !c) continue;
    const target = connections === Math.max(...config.concurrencies) ? ` (target >= ${config.targetRatio.toFixed(1)})` : '';
    lines.push(`ratio c/a @${connections} = ${(c.reqPerSec / a.reqPerSec).toFixed(2)}`);
    lines.push(`ratio c/b @${connections} = ${(c.reqPerSec / b.reqPerSec).toFixed(2)}${target}`);
  }
  const top = Math.max(...config.concurrencies);
  const [b, c] = [find('b', top), find('c', top)];
  const ratio = b && c ? c.reqPerSec / b.reqPerSec : NaN;
  const p99 = c ? c.p99Ms : NaN;
  const pass = ratio >= config.targetRatio && p99 < config.targetP99Ms;
  lines.push(
    `target: c/b >= ${config.targetRatio.toFixed(1)} at concurrency ${top} with p99 < ${config.targetP99Ms} ms: ` +
      `c/b = ${ratio.toFixed(2)}, p99 = ${formatMs(p99)} ms -> ${pass ? 'PASS' : 'MISS'}`,
  );
  return { lines, pass };
}
