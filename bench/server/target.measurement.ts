import { runLoad, type LoadResult } from './load.runner';
import type { McpBenchSession } from './mcp.session';
import { cpuSince, readHostCpu, readPostgresCpu } from './proc.stats';
import type { TargetProcess } from './target.process';

/** One measured run of one target, with what it cost the machine. */
export interface Measurement extends LoadResult {
  key: string;
  label: string;
  /** The target's resident memory right after the run. */
  rssBytes: number | null;
  /** CPU the target process used per correct response, in microseconds. */
  cpuUsPerReq: number | null;
  /** CPU PostgreSQL used for the bench database per correct response, in microseconds. */
  pgUsPerReq: number;
  /** CPU the load generator (this process) used per correct response, in microseconds. */
  loadUsPerReq: number;
  /** Share of the whole machine's CPU time that was busy during the run (0..1). */
  hostBusy: number;
}

/** Runs the load against a live target, sampling CPU around the run and RSS after it. */
export async function measureTarget(
  target: TargetProcess,
  session: McpBenchSession,
  connections: number,
  seconds: number,
  database: string,
): Promise<Measurement> {
  target.assertAlive();
  const cpuBefore = target.cpuMs();
  const pgBefore = readPostgresCpu(database);
  const hostBefore = readHostCpu();
  const loadBefore = process.cpuUsage();

  const result = await runLoad(target.url, session, connections, seconds);

  const load = process.cpuUsage(loadBefore);
  const hostAfter = readHostCpu();
  const pgMs = cpuSince(pgBefore, readPostgresCpu(database));
  const cpuAfter = target.cpuMs();
  target.assertAlive();
  const ok = Math.max(1, result.completed - result.non2xx - result.badBodies);
  return {
    ...result,
    key: target.spec.key,
    label: target.spec.label,
    rssBytes: target.rssBytes(),
    cpuUsPerReq: cpuBefore !== null && cpuAfter !== null ? ((cpuAfter - cpuBefore) * 1000) / ok : null,
    pgUsPerReq: (pgMs * 1000) / ok,
    loadUsPerReq: (load.user + load.system) / ok,
    hostBusy: (hostAfter.busy - hostBefore.busy) / Math.max(1, hostAfter.total - hostBefore.total),
  };
}
