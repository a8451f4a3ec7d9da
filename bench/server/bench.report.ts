import type { BenchConfig } from './bench.config';
import type { TargetSpec } from './target.process';
import type { Measurement } from './target.measurement';

/** The median of each figure of one target at one concurrency, over the rounds. */
export interface Summary {
  key: string;
  label: string;
  role: TargetSpec['role'];
  /** For a baseline: the key of the target of ours it is the earlier build of. */
  mirrors?: string;
  connections: number;
  /** How many measured runs the medians are taken over. */
  runs: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  rssBytes: number;
  cpuUsPerReq: number;
  gcUsPerReq: number;
  pgUsPerReq: number;
  loadUsPerReq: number;
  hostBusy: number;
}

/** The median of the finite values (the mean of the middle two for an even count); NaN for none. */
export function median(values: number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((x, y) => x - y);
  if (!sorted.length) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Medians per figure of the rounds of one target at one concurrency. */
export function summarize(spec: TargetSpec, runs: Measurement[]): Summary {
  const pick = (f: (m: Measurement) => number | null) => median(runs.map((m) => f(m) ?? NaN));
  return {
    key: spec.key,
    label: spec.label,
    role: spec.role,
    mirrors: spec.mirrors,
    connections: runs[0].connections,
    runs: runs.length,
    reqPerSec: pick((m) => m.reqPerSec),
    p50Ms: pick((m) => m.p50Ms),
    p99Ms: pick((m) => m.p99Ms),
    rssBytes: pick((m) => m.rssBytes),
    cpuUsPerReq: pick((m) => m.cpuUsPerReq),
    gcUsPerReq: pick((m) => m.gcUsPerReq),
    pgUsPerReq: pick((m) => m.pgUsPerReq),
    loadUsPerReq: pick((m) => m.loadUsPerReq),
    hostBusy: pick((m) => m.hostBusy),
  };
}

/** One measured run and the round it belongs to. */
export type RoundMeasurement = Measurement & { round: number };

/**
 * The ratio `ours / baseline` of one figure, round by round: each round measures a baseline
 * right next to the target of ours it mirrors, so a round's ratio compares two runs made under
 * the same noise. Rounds where either figure is missing are left out.
 */
export function pairedRatios(
  runs: RoundMeasurement[],
  oursKey: string,
  baselineKey: string,
  connections: number,
  figure: (m: Measurement) => number | null,
): number[] {
  const at = (key: string, round: number) =>
    runs.find((m) => m.key === key && m.connections === connections && m.round === round);
  const rounds = [...new Set(runs.map((m) => m.round))].sort((a, b) => a - b);
  const ratios: number[] = [];
  for (const round of rounds) {
    const ours = at(oursKey, round);
    const base = at(baselineKey, round);
    const a = ours ? figure(ours) : null;
    const b = base ? figure(base) : null;
    if (a !== null && b !== null && Number.isFinite(a) && Number.isFinite(b) && b > 0) ratios.push(a / b);
  }
  return ratios;
}

/** `median (min-max over N rounds)` of round-by-round ratios, or `-` when there are none. */
function spreadOf(ratios: number[]): string {
  if (!ratios.length) return '-';
  return `${times(median(ratios))} (${times(Math.min(...ratios))}-${times(Math.max(...ratios))} over ${ratios.length} rounds)`;
}

/** Milliseconds with as many decimals as make sense for their size. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  return ms >= 10 ? ms.toFixed(0) : ms >= 1 ? ms.toFixed(1) : ms.toFixed(2);
}

function whole(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toString() : '-';
}

function times(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}x` : '-';
}

const LABEL_WIDTH = 20;

/** The concurrency of the throughput and CPU goals. */
const GOAL_HIGH_CONCURRENCY = 32;
/** The concurrency of the latency, async-throughput and adapter goals. */
const GOAL_LOW_CONCURRENCY = 1;

/** The width of the target column for these labels: the usual 17, wider for a longer label (a baseline's). */
export function labelWidth(labels: string[]): number {
  return Math.max(LABEL_WIDTH, ...labels.map((label) => label.length + 1));
}

/** The header of the results table; {@link formatSummary} prints the rows. */
export function summaryHeader(width = LABEL_WIDTH): string {
  return (
    `${'conc'.padEnd(5)}${'target'.padEnd(width)}${'req/s'.padStart(7)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}` +
    `${'cpu µs/req'.padStart(12)}${'gc µs/req'.padStart(11)}${'pg µs/req'.padStart(11)}${'rss MiB'.padStart(9)}${'loadgen µs/req'.padStart(16)}${'host busy'.padStart(11)}`
  );
}

/** One row of the results table: the medians of one target at one concurrency. */
export function formatSummary(s: Summary, width = LABEL_WIDTH): string {
  return (
    `${`c=${s.connections}`.padEnd(5)}${s.label.padEnd(width)}${whole(s.reqPerSec).padStart(7)}${formatMs(s.p50Ms).padStart(8)}${formatMs(s.p99Ms).padStart(8)}` +
    `${whole(s.cpuUsPerReq).padStart(12)}${whole(s.gcUsPerReq).padStart(11)}${whole(s.pgUsPerReq).padStart(11)}${whole(s.rssBytes / 1048576).padStart(9)}` +
    `${whole(s.loadUsPerReq).padStart(16)}${`${whole(s.hostBusy * 100)}%`.padStart(11)}`
  );
}

/**
 * Per concurrency, a table of each target of ours against every other target: its req/s over
 * theirs, its server CPU per request over theirs, and its server + PostgreSQL CPU per request
 * over theirs (peers have no database, so that is what the audit trail costs in total).
 */
export function formatRatios(summaries: Summary[], config: BenchConfig): string[] {
  const lines: string[] = [];
  for (const connections of config.concurrencies) {
    const here = summaries.filter((s) => s.connections === connections);
    const ours = here.filter((s) => s.role === 'ours');
    const others = here.filter((s) => s.role === 'floor' || s.role === 'peer');
    if (!ours.length || !others.length) continue;
    const width = 24;
    lines.push(
      `ratios at c=${connections}, ours / other: req/s (higher is better), server cpu and server+pg cpu per request (lower is better)`,
    );
    lines.push(`${''.padEnd(LABEL_WIDTH)}${others.map((o) => o.label.padEnd(width)).join('')}`);
    for (const o of ours) {
      const cells = others.map((peer) =>
        `${times(o.reqPerSec / peer.reqPerSec)} ${times(o.cpuUsPerReq / peer.cpuUsPerReq)} ${times((o.cpuUsPerReq + o.pgUsPerReq) / (peer.cpuUsPerReq + peer.pgUsPerReq))}`.padEnd(
          width,
        ),
      );
      lines.push(`${o.label.padEnd(LABEL_WIDTH)}${cells.join('')}`);
    }
  }
  return lines;
}

/**
 * Which audit floor bounds which variant of ours: a Nest app on the same adapter, and bare
 * `node:http`, each committing one row per request and doing nothing else.
 */
const CEILINGS = [
  ['ours', 'nest-floor-pg'],
  ['ours-fastify', 'nest-fastify-floor-pg'],
  ['ours-async', 'nest-floor-pg-async'],
  ['ours', 'bare-pg'],
  ['ours-async', 'bare-pg-async'],
] as const;

/**
 * What the goals against the peers can reach at most, per concurrency: each audit floor (a
 * guarded Nest controller, or bare `node:http`, that commits one `mcp_events` row per request, the
 * least an audit trail costs) against every peer in req/s and against sdk-2.x in server CPU per request and p50, then the
 * variant of ours on the same adapter as a share of that floor, and that share round by round
 * (each floor runs right next to the variant it bounds).
 */
export function formatCeilings(summaries: Summary[], config: BenchConfig, runs: RoundMeasurement[] = []): string[] {
  const lines: string[] = [];
  for (const connections of config.concurrencies) {
    const here = summaries.filter((s) => s.connections === connections);
    const peers = here.filter((s) => s.role === 'peer');
    const sdk2 = here.find((s) => s.key === 'sdk2');
    for (const [oursKey, floorKey] of CEILINGS) {
      const floor = here.find((s) => s.key === floorKey);
      if (!floor) continue;
      const ours = here.find((s) => s.key === oursKey);
      const vsPeers = peers.map((p) => `${times(floor.reqPerSec / p.reqPerSec)} ${p.label}`).join(', ');
      const cpu = sdk2
        ? `; server cpu ${times(floor.cpuUsPerReq / sdk2.cpuUsPerReq)}, p50 ${times(floor.p50Ms / sdk2.p50Ms)} sdk-2.x's`
        : '';
      const share = ours
        ? `; ${ours.label} serves ${times(ours.reqPerSec / floor.reqPerSec)} its req/s at ${times(ours.cpuUsPerReq / floor.cpuUsPerReq)} its server cpu`
        : '';
      lines.push(`ceiling c=${connections} ${floor.label}: req/s ${vsPeers || 'no peer ran'}${cpu}${share}`);
      if (!ours) continue;
      const reqs = pairedRatios(runs, ours.key, floor.key, connections, (m) => m.reqPerSec);
      const cpus = pairedRatios(runs, ours.key, floor.key, connections, (m) => m.cpuUsPerReq);
      if (reqs.length)
        lines.push(`  ${ours.label} / ${floor.label} round by round: req/s ${spreadOf(reqs)}, cpu ${spreadOf(cpus)}`);
    }
  }
  return lines;
}

/**
 * Per concurrency, each target of ours against its baseline (the same variant built from an
 * earlier commit): req/s (above 1 is better for the working tree), p50, p99, server CPU and
 * PostgreSQL CPU per request (below 1 is better). A baseline whose variant of ours did not run
 * gets a line saying so.
 */
export function formatBaselineRatios(
  summaries: Summary[],
  config: BenchConfig,
  runs: RoundMeasurement[] = [],
): string[] {
  const baselines = summaries.filter((s) => s.role === 'baseline');
  if (!baselines.length) return [];
  const lines = [
    'ratios of the working tree to the baseline, ours / baseline: req/s (higher is better), p50, p99, server cpu and pg cpu per request (lower is better)',
  ];
  const width = labelWidth(summaries.map((s) => s.label));
  for (const connections of config.concurrencies) {
    for (const base of baselines.filter((s) => s.connections === connections)) {
      const ours = summaries.find((s) => s.key === base.mirrors && s.connections === connections);
      const pair = `${(ours?.label ?? base.mirrors ?? '?').padEnd(LABEL_WIDTH)}/ ${base.label.padEnd(width)}${`c=${connections}`.padEnd(6)}`;
      if (!ours) {
        lines.push(`${pair}not compared: ${base.mirrors} did not run (add it to BENCH_TARGETS)`);
        continue;
      }
      const cell = (name: string, value: number) => `${name} ${times(value).padEnd(7)}`;
      lines.push(
        pair +
          [
            cell('req/s', ours.reqPerSec / base.reqPerSec),
            cell('p50', ours.p50Ms / base.p50Ms),
            cell('p99', ours.p99Ms / base.p99Ms),
            cell('cpu', ours.cpuUsPerReq / base.cpuUsPerReq),
            cell('gc', ours.gcUsPerReq / base.gcUsPerReq),
            cell('pg', ours.pgUsPerReq / base.pgUsPerReq),
          ]
            .join(' ')
            .trimEnd(),
      );
      if (!base.key || !ours.key) continue;
      const reqs = pairedRatios(runs, ours.key, base.key, connections, (m) => m.reqPerSec);
      const cpus = pairedRatios(runs, ours.key, base.key, connections, (m) => m.cpuUsPerReq);
      if (reqs.length) {
        lines.push(`${' '.repeat(pair.length)}round by round: req/s ${spreadOf(reqs)}, cpu ${spreadOf(cpus)}`);
      }
    }
  }
  return lines;
}

/** One goal and whether the run met it. */
export interface GoalVerdict {
  line: string;
  pass: boolean;
  /**
   * True when the audit floor with no framework (`bare-pg`, or `bare-pg-async` for the async
   * goal) ran and misses the goal as well: out of reach, on this machine in this run, of any
   * server that commits a row before it answers.
   */
  floorMisses?: boolean;
}

/**
 * The goals, each against targets measured in the same run:
 * - at c=32, ours(pg) (Express, audit committed before the answer) at `peerRatio` times each
 *   peer's req/s and ours-fastify(pg) at `fastifyPeerRatio` times; ours(pg)'s server CPU per
 *   request at most `cpuRatioToSdk2` times sdk-2.x's;
 * - at c=1, ours-async(pg) at `asyncPeerRatio` times each peer's req/s; ours(pg)'s p50 at most
 *   `p50RatioToSdk2AtOne` times sdk-2.x's; Express within `adapterSpread` of Fastify, in server
 *   CPU per request and in p50;
 * - with a baseline, every target of ours at `baselineFloor` times its baseline's req/s at every
 *   concurrency (no regression).
 *
 * A goal whose targets were not run is reported as not measured.
 */
export function judgeGoals(
  summaries: Summary[],
  config: BenchConfig,
  notes: Map<string, string>,
  runs: RoundMeasurement[] = [],
): GoalVerdict[] {
  const { goals } = config;
  const find = (key: string, connections: number) =>
    summaries.find((s) => s.key === key && s.connections === connections);
  const peersAt = (connections: number) => summaries.filter((s) => s.role === 'peer' && s.connections === connections);
  const verdicts: GoalVerdict[] = [];
  const add = (text: string, pass: boolean, measured: boolean, key: string, floorMisses = false) => {
    const note = notes.get(key) ? ` [${notes.get(key)}]` : '';
    verdicts.push({
      line: `goal ${text} -> ${measured ? (pass ? 'PASS' : 'MISS') : 'not measured'}${note}`,
      pass: measured && pass,
      floorMisses,
    });
  };
  /** `ours / theirs` of one figure, NaN when either target did not run. */
  const ratioOf = (ours: Summary | undefined, theirs: Summary | undefined, figure: (s: Summary) => number) =>
    ours && theirs ? figure(ours) / figure(theirs) : NaN;
  const atLeast = (ratio: number, goal: number) => ratio >= goal;
  const atMost = (ratio: number, goal: number) => ratio <= goal;
  const reqPerSec = (s: Summary) => s.reqPerSec;
  /**
   * What the floor with no framework reached on the same goal, where it ran (`bare-pg`, or
   * `bare-pg-async` for the variant that commits asynchronously): a goal it misses as well is
   * the machine's, not ours.
   */
  const floorOn = (floor: Summary | undefined, ratio: number, meets: (ratio: number) => boolean, oursRatio: number) => {
    if (!floor || !Number.isFinite(ratio)) return { text: '', misses: false };
    const misses = !meets(ratio);
    const verdict = misses ? `, a miss${meets(oursRatio) ? '' : ' too'}` : '';
    return { text: ` (the floor ${floor.label}: ${times(ratio)}${verdict})`, misses };
  };

  // The goals are set at these two concurrencies; one that BENCH_CONCURRENCY left out is not measured.
  const top = GOAL_HIGH_CONCURRENCY;
  const low = GOAL_LOW_CONCURRENCY;
  for (const [key, goal] of [
    ['ours', goals.peerRatio],
    ['ours-fastify', goals.fastifyPeerRatio],
  ] as const) {
    const ours = find(key, top);
    const bare = find('bare-pg', top);
    for (const peer of peersAt(top)) {
      const ratio = ratioOf(ours, peer, reqPerSec);
      const floor = floorOn(bare, ratioOf(bare, peer, reqPerSec), (r) => atLeast(r, goal), ratio);
      add(
        `c=${top} ${key}(pg) req/s >= ${goal.toFixed(1)}x ${peer.label}: ${times(ratio)}${floor.text}`,
        atLeast(ratio, goal),
        Boolean(ours),
        key,
        floor.misses,
      );
    }
  }
  const sdk2Top = find('sdk2', top);
  const cpuRatio = ratioOf(find('ours', top), sdk2Top, (s) => s.cpuUsPerReq);
  add(
    `c=${top} ours(pg) server cpu/req <= ${goals.cpuRatioToSdk2.toFixed(2)}x sdk-2.x's: ${times(cpuRatio)}`,
    atMost(cpuRatio, goals.cpuRatioToSdk2),
    Boolean(find('ours', top) && sdk2Top),
    'ours',
  );
  const asyncLow = find('ours-async', low);
  const bareAsyncLow = find('bare-pg-async', low);
  for (const peer of peersAt(low)) {
    const ratio = ratioOf(asyncLow, peer, reqPerSec);
    const floor = floorOn(
      bareAsyncLow,
      ratioOf(bareAsyncLow, peer, reqPerSec),
      (r) => atLeast(r, goals.asyncPeerRatio),
      ratio,
    );
    add(
      `c=${low} ours-async(pg) req/s >= ${goals.asyncPeerRatio.toFixed(1)}x ${peer.label}: ${times(ratio)}${floor.text}`,
      atLeast(ratio, goals.asyncPeerRatio),
      Boolean(asyncLow),
      'ours-async',
      floor.misses,
    );
  }
  const oursLow = find('ours', low);
  const sdk2Low = find('sdk2', low);
  const p50Ratio = ratioOf(oursLow, sdk2Low, (s) => s.p50Ms);
  const bareLow = find('bare-pg', low);
  const floor = floorOn(
    bareLow,
    ratioOf(bareLow, sdk2Low, (s) => s.p50Ms),
    (r) => atMost(r, goals.p50RatioToSdk2AtOne),
    p50Ratio,
  );
  add(
    `c=${low} ours(pg) p50 <= ${goals.p50RatioToSdk2AtOne.toFixed(1)}x sdk-2.x's: ${formatMs(oursLow?.p50Ms ?? NaN)} vs ${formatMs(sdk2Low?.p50Ms ?? NaN)} ms, ${times(p50Ratio)}${floor.text}`,
    atMost(p50Ratio, goals.p50RatioToSdk2AtOne),
    Boolean(oursLow && sdk2Low),
    'ours',
    floor.misses,
  );
  const fastifyLow = find('ours-fastify', low);
  for (const [name, figure] of [
    ['server cpu/req', (s: Summary) => s.cpuUsPerReq],
    ['p50', (s: Summary) => s.p50Ms],
  ] as const) {
    const ratio = ratioOf(oursLow, fastifyLow, figure);
    add(
      `c=${low} ours(pg) ${name} <= ${goals.adapterSpread.toFixed(1)}x ours-fastify(pg)'s: ${times(ratio)}`,
      atMost(ratio, goals.adapterSpread),
      Boolean(oursLow && fastifyLow),
      'ours',
    );
  }
  for (const baseline of summaries.filter((s) => s.role === 'baseline' && s.mirrors)) {
    const ours = find(baseline.mirrors as string, baseline.connections);
    if (!ours) continue;
    // Round by round when the rounds paired them (the median of the rounds' ratios), else the ratio of the medians.
    const paired = pairedRatios(runs, ours.key, baseline.key, baseline.connections, (m) => m.reqPerSec);
    const ratio = paired.length ? median(paired) : ratioOf(ours, baseline, reqPerSec);
    const how = paired.length ? `, the median of ${paired.length} rounds' ratios` : '';
    add(
      `c=${baseline.connections} ${ours.label} req/s >= ${goals.baselineFloor.toFixed(2)}x ${baseline.label} (no regression): ${times(ratio)}${how}`,
      atLeast(ratio, goals.baselineFloor),
      true,
      ours.key,
    );
  }
  return verdicts;
}
