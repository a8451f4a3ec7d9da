import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { join } from 'node:path';

/**
 * `node -r TS_REGISTER file.ts` runs a TypeScript child (ts-register.js: compiled by SWC with the
 * options Jest uses, cached on disk, so only the first child of a run compiles src/mcp).
 */
export const TS_REGISTER = join(__dirname, 'ts-register.js');

/** A child process started by a suite, ready once its output matched. */
export interface ReadyChild {
  child: ChildProcess;
  /** What it wrote to stdout and stderr so far. */
  output(): string;
  /** The match of the readiness pattern. */
  ready: RegExpExecArray;
  /** SIGTERM, then SIGKILL if it is still there after `graceMs`; resolves once it exited. */
  stop(graceMs?: number): Promise<void>;
}

/** How long a child may take to become ready (transpiling, when not cached, and a Nest boot) on a loaded machine. */
export const CHILD_READY_DEADLINE_MS = 60_000;

/**
 * Spawns a child and resolves once its stdout or stderr matches `ready`. A child that exits
 * first, or is not ready within `deadlineMs`, is killed and the promise rejects with its output
 * (and, for the deadline, its pid) once the child has exited.
 */
export function spawnReady(
  command: string,
  args: string[],
  options: SpawnOptions,
  ready: RegExp,
  deadlineMs = CHILD_READY_DEADLINE_MS,
): Promise<ReadyChild> {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const alive = () => child.exitCode === null && child.signalCode === null;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (graceMs = 10_000) => {
    if (alive()) child.kill('SIGTERM');
    const timer = setTimeout(() => alive() && child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    let timedOut = false;
    // At the deadline the child is killed; the promise rejects once it has exited, so it is gone when the caller hears.
    const deadline = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, deadlineMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (!match) return;
      clearTimeout(deadline);
      resolve({ child, output: () => output, ready: match, stop });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(() => {
      clearTimeout(deadline);
      if (timedOut)
        reject(
          new Error(
            `${command} ${args.join(' ')} (pid ${child.pid}) was not ready within ${deadlineMs} ms and was killed:\n${output}`,
          ),
        );
      else
        reject(
          new Error(
            `${command} ${args.join(' ')} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${output}`,
          ),
        );
    });
  });
}

/**
 * The suites' loopback ports, from the one implementation the run's own servers use too
 * (test-services.js):
 * - `loopbackPortFree(port)`: whether `port` can be bound on loopback right now;
 * - `ephemeralPortsStart()`: the first port of the kernel's ephemeral range, from which outgoing
 *   connections and `listen(0)` take theirs;
 * - `freeLoopbackPort(below?)`: a loopback port nothing listens on right now, below the ephemeral
 *   range, so a server a test stops and starts again on its port (a private PostgreSQL or Redis)
 *   finds it free again; `below` bounds it further (a Redis Cluster node also needs the port 10000
 *   above its own).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a JavaScript module Jest's globalSetup and the scripts share, outside the TypeScript project
export const { loopbackPortFree, ephemeralPortsStart, freeLoopbackPort } = require('./test-services.js') as {
  loopbackPortFree(port: number): Promise<boolean>;
  ephemeralPortsStart(): number;
  freeLoopbackPort(below?: number): Promise<number>;
};
