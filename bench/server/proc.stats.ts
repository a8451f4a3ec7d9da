import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let clockTicks: number | undefined;

/** Kernel clock ticks per second, the unit of CPU times in /proc/<pid>/stat. */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** Resident set size of a process in bytes (VmRSS), or null once it is gone. */
export function readRssBytes(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** The name and user+system CPU time (ms) of a process, or null once it is gone. */
function readStat(pid: number): { comm: string; cpuMs: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself contain spaces or parentheses.
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    const fields = text.slice(close + 2).split(' ');
    // Fields 14 and 15 of the file (utime, stime) are at 11 and 12 after the name.
    return { comm, cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond() };
  } catch {
    return null;
  }
}

/** CPU time (user + system, ms) a process has used so far, or null once it is gone. */
export function readCpuMs(pid: number): number | null {
  return readStat(pid)?.cpuMs ?? null;
}

/** CPU time (ms), keyed by pid, of the listed processes that are still running. */
export function readCpuOfPids(pids: Iterable<number>): Map<number, number> {
  const found = new Map<number, number>();
  for (const pid of pids) {
    const ms = readCpuMs(pid);
    if (ms !== null) found.set(pid, ms);
  }
  return found;
}

/** CPU time (ms) the processes of `after` used since `before` (new processes count from zero). */
export function cpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** Busy and total jiffies of the whole machine (all CPUs), from /proc/stat. */
export function readHostCpu(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const total = values.reduce((sum, value) => sum + value, 0);
  // idle and iowait are the 4th and 5th numbers.
  return { busy: total - values[3] - (values[4] ?? 0), total };
}

/** Share of the machine's CPU (0..1) that was busy over the next `ms` milliseconds. */
export async function sampleHostBusy(ms: number): Promise<number> {
  const before = readHostCpu();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = readHostCpu();
  return (after.busy - before.busy) / Math.max(1, after.total - before.total);
}
