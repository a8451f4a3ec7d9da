import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

/**
 * `node -r TS_REGISTER file.ts` runs a TypeScript child (ts-register.js: ts-node's transpile-only
 * output, cached on disk, so only the first child of a run pays for transpiling src/mcp).
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

/** A loopback port nothing listens on right now (bound once, then released). */
export async function freeLoopbackPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
