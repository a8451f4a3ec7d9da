import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { NdjsonDecoder, type NdjsonLine } from '../../../protocol/ndjson';
import { StdioStderrTail } from './stdio-stderr';

/** How a child process ended. */
export interface StdioExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be started (ENOENT, EACCES...). */
  spawnError?: NodeJS.ErrnoException;
}

/** What a `StdioProcess` reports to its owner. */
export interface StdioProcessHandlers {
  /** A line of stdout, decoded and parsed. */
  line(line: NdjsonLine): void;
  /** A stdout line longer than the limit was discarded. */
  overflow(chars: number): void;
  /** stdout is finished: the process exited (or never started) and its pipe is drained. */
  closed(exit: StdioExit): void;
}

/** How to start a process. */
export interface StdioSpawnSpec {
  argv: readonly string[];
  env: Record<string, string>;
  cwd: string | undefined;
  stderrLimitBytes: number;
  maxMessageChars: number;
}

// A grandchild may keep stdout open after the process itself exited; do not wait on it forever.
const CLOSE_AFTER_EXIT_MS = 250;
// On POSIX the child leads its own process group, so shutdown also reaches what it started.
const USE_PROCESS_GROUP = process.platform !== 'win32';

/**
 * One server process with its pipes pinned to UTF-8: stdout cut into lines, stderr drained into a
 * bounded tail, and the shutdown sequence (close stdin, wait, SIGTERM, wait, SIGKILL).
 */
export class StdioProcess {
  /** Resolves once the process has exited (or failed to start). */
  readonly exit: Promise<StdioExit>;
  /** Resolves once the process has exited and its pipes are drained (or stopped being awaited). */
  readonly drained: Promise<void>;
  private markDrained!: () => void;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly stderrTail: StdioStderrTail;
  private exitInfo: StdioExit | null = null;
  private closedReported = false;
  private shuttingDown: Promise<void> | null = null;

  constructor(spec: StdioSpawnSpec, private readonly handlers: StdioProcessHandlers) {
    this.stderrTail = new StdioStderrTail(spec.stderrLimitBytes);
    this.drained = new Promise<void>((resolve) => (this.markDrained = resolve));
    const decoder = new NdjsonDecoder({ line: (line) => handlers.line(line), overflow: (chars) => handlers.overflow(chars) }, spec.maxMessageChars);
    this.child = spawn(spec.argv[0], spec.argv.slice(1), {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      shell: false,
      windowsHide: true,
      detached: USE_PROCESS_GROUP,
    });
    this.child.stdout.setEncoding('utf8');
    this.child.stdin.setDefaultEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => decoder.push(chunk));
    this.child.stdout.on('end', () => decoder.end());
    this.child.stderr.on('data', (chunk: Buffer) => this.stderrTail.push(chunk));
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) stream.on('error', () => undefined);
    this.exit = new Promise<StdioExit>((resolve) => {
      this.child.on('error', (error: NodeJS.ErrnoException) => {
        if (this.child.pid === undefined) this.finish({ code: null, signal: null, spawnError: error }, resolve);
      });
      this.child.once('exit', (code, signal) => this.finish({ code, signal }, resolve));
    });
    this.child.once('close', () => this.reportClosed());
  }

  /** The pid, or undefined when the process could not be started. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** True until the process has exited. */
  get running(): boolean {
    return this.exitInfo === null;
  }

  /** Bytes written to stderr so far: a mark for `stderr(since)`. */
  get stderrBytes(): number {
    return this.stderrTail.totalBytes;
  }

  /** The captured end of stderr (see `stderrLimitBytes`), from the `since` mark on. */
  stderr(since = 0): string {
    return this.stderrTail.text(since);
  }

  /** Writes one already-framed line; false when stdin is no longer writable. */
  write(line: string): boolean {
    const stdin = this.child.stdin;
    if (this.exitInfo !== null || stdin.destroyed || stdin.writableEnded) return false;
    stdin.write(line);
    return true;
  }

  /**
   * Ends the process: close stdin, wait `closeGraceMs`, SIGTERM, wait `killGraceMs`, SIGKILL.
   * Resolves once it has exited. Safe to call more than once.
   */
  shutdown(closeGraceMs: number, killGraceMs: number): Promise<void> {
    this.shuttingDown ??= this.runShutdown(closeGraceMs, killGraceMs);
    return this.shuttingDown;
  }

  private async runShutdown(closeGraceMs: number, killGraceMs: number): Promise<void> {
    if (this.child.pid !== undefined && this.exitInfo === null) {
      this.child.stdin.end();
      if (!(await this.exitWithin(closeGraceMs))) {
        this.signal('SIGTERM');
        if (!(await this.exitWithin(killGraceMs))) {
          this.signal('SIGKILL');
          await this.exit;
        }
      }
    }
    await this.exit;
    this.killLeftovers();
    // The last stderr bytes (a crash's stack trace) may still be in the pipe after the exit.
    await this.drained;
  }

  private exitWithin(ms: number): Promise<boolean> {
    if (this.exitInfo !== null) return Promise.resolve(true);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    return Promise.race([this.exit.then(() => true), timeout]).finally(() => clearTimeout(timer));
  }

  private signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined || this.exitInfo !== null) return;
    try {
      if (USE_PROCESS_GROUP) process.kill(-pid, signal);
      else this.child.kill(signal);
    } catch {
      this.child.kill(signal);
    }
  }

  /** Processes the server started in its group must not outlive it either. */
  private killLeftovers(): void {
    const pid = this.child.pid;
    if (!USE_PROCESS_GROUP || pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // ESRCH: the group is empty, which is the normal case.
    }
  }

  private finish(info: StdioExit, resolve: (exit: StdioExit) => void): void {
    if (this.exitInfo !== null) return;
    this.exitInfo = info;
    resolve(info);
    if (info.spawnError) this.reportClosed();
    else setTimeout(() => this.reportClosed(), CLOSE_AFTER_EXIT_MS).unref();
  }

  private reportClosed(): void {
    // 'close' follows 'exit'; when it comes first anyway, the timer set by finish reports it.
    if (this.closedReported || this.exitInfo === null) return;
    this.closedReported = true;
    this.markDrained();
    this.handlers.closed(this.exitInfo);
  }
}
