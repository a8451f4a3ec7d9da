import { runLoad, type LoadResult } from './load.runner';
import type { McpBenchSession } from './mcp.session';
import { cpuSince, readCpuOfPids, readHostCpu } from './proc.stats';
import type { TargetProcess } from './target.process';

/** One measured run of one target, with what it cost the machine. */
export interface Measurement extends LoadResult {
  key: string;
  label: string;
  /** The target's resident memory right after the run. */
  rssBytes: number | null;
  /** CPU the target process used per correct response, in microseconds. */
  cpuUsPerReq: number | null;
  /** Time the target spent in garbage collection pauses per correct response, in microseconds. */
  gcUsPerReq: number | null;
  /** CPU of the PostgreSQL backends serving the target's database per correct response, in microseconds (0 without one). */
  pgUsPerReq: number;
  /** CPU the load generator (this process) used per correct response, in microseconds. */
  loadUsPerReq: number;
  /** Share of the whole machine's CPU time that was busy during the run (0..1). */
  hostBusy: number;
}

/** Lists the pids of the PostgreSQL backends serving a target's database, at the moment of the call. */
export type BackendPids = () => Promise<number[]>;

/**
 * Runs the load against a live target, sampling CPU around the run and RSS after it. The
 * PostgreSQL figure is the CPU of the backends `backends` lists before and after the run (a
 * backend that connects during the run counts from zero).
 */
export async function measureTarget(
  target: TargetProcess,
  session: McpBenchSession,
  connections: number,
  seconds: number,
  backends: BackendPids | null,
): Promise<Measurement> {
  target.assertAlive();
  const pidsBefore = backends ? await backends() : [];
  const pgBefore = readCpuOfPids(pidsBefore);
  const gcBefore = await target.gcMs();
  const cpuBefore = target.cpuMs();
  const hostBefore = readHostCpu();
  const loadBefore = process.cpuUsage();

  const result = await runLoad(target.url, session, connections, seconds);

  const load = process.cpuUsage(loadBefore);
  const hostAfter = readHostCpu();
  const cpuAfter = target.cpuMs();
  const gcAfter = await target.gcMs();
  const pidsAfter = backends ? await backends() : [];
  const pgMs = cpuSince(pgBefore, readCpuOfPids(new Set([...pidsBefore, ...pidsAfter])));
  target.assertAlive();
  const ok = Math.max(1, result.completed - result.non2xx - result.badBodies);
  return {
    ...result,
    key: target.spec.key,
    label: target.spec.label,
    rssBytes: target.rssBytes(),
    cpuUsPerReq: cpuBefore !== null && cpuAfter !== null ? ((cpuAfter - cpuBefore) * 1000) / ok : null,
    gcUsPerReq: gcBefore !== null && gcAfter !== null ? ((gcAfter - gcBefore) * 1000) / ok : null,
    pgUsPerReq: (pgMs * 1000) / ok,
    loadUsPerReq: (load.user + load.system) / ok,
    hostBusy: (hostAfter.busy - hostBefore.busy) / Math.max(1, hostAfter.total - hostBefore.total),
  };
}
