import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createWriteStream } from 'node:fs';

/** A child started by the runner, in its own process group so that its whole tree can be stopped. */
export interface Started {
  child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

const running = new Set<ChildProcess>();

/**
 * Starts `argv` in a new process group. Output goes to `logFile` (and, with `echo`, to our
 * stdout as well); `onLine` sees every stdout line.
 */
export function start(
  argv: string[],
  options: SpawnOptions & { logFile: string; echo?: boolean; onLine?: (line: string) => void },
): Started {
  const { logFile, echo, onLine, ...spawnOptions } = options;
  const child = spawn(argv[0], argv.slice(1), { ...spawnOptions, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const log = createWriteStream(logFile, { flags: 'a' });
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    log.write(chunk);
    if (echo) process.stdout.write(chunk);
    if (!onLine) return;
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    log.write(chunk);
    if (echo) process.stderr.write(chunk);
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('error', (error) => {
      log.write(`\n[runner] failed to start ${argv[0]}: ${error.message}\n`);
      running.delete(child);
      resolve(127);
    });
    child.once('exit', (code) => {
      running.delete(child);
      log.end();
      resolve(code);
    });
  });
  return { child, exited };
}

/** Signals the whole process group of `child` (npx and everything it started). */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/** Stops one started child and its group: SIGTERM, then SIGKILL after `graceMs`. */
export async function stop(started: Started, graceMs = 3000): Promise<void> {
  if (started.child.exitCode !== null || started.child.signalCode !== null) {
    signalGroup(started.child, 'SIGKILL'); // grandchildren may outlive their parent
    return;
  }
  signalGroup(started.child, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(started.child, 'SIGKILL'), graceMs);
  await started.exited;
  clearTimeout(timer);
  signalGroup(started.child, 'SIGKILL');
}

/** Last resort on the way out (also from signal handlers): SIGKILL every group still running. */
export function killAll(): void {
  for (const child of running) signalGroup(child, 'SIGKILL');
  running.clear();
}

/** Resolves with the exit code, or kills the group and resolves `'timeout'` after `ms`. */
export async function waitWithDeadline(started: Started, ms: number): Promise<number | null | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  const outcome = await Promise.race([started.exited, deadline]);
  clearTimeout(timer);
  if (outcome === 'timeout') await stop(started, 1000);
  return outcome;
}
