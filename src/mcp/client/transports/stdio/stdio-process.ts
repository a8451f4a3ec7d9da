import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { NdjsonDecoder, type NdjsonLine } from '../../../protocol/ndjson';
import { StdioStderrTail } from './stdio-stderr';
import { STDIO_SUPERVISOR_SOURCE, type StdioSupervisorReport } from './stdio-supervisor';

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
  /** How long the supervisor waits between SIGTERM and SIGKILL once this process is gone. */
  orphanGraceMs: number;
}

// A grandchild may keep stdout open after the process itself exited; do not wait on it forever.
const CLOSE_AFTER_EXIT_MS = 250;
// On POSIX the child is the supervisor (see stdio-supervisor.ts), so the server cannot outlive
// this process, and the server leads its own process group, so shutdown also reaches what it
// started; the supervisor, outside that group, reaps the server however it ends.
const USE_PROCESS_GROUP = process.platform !== 'win32';

function spawnChild(spec: StdioSpawnSpec): ChildProcess {
  const common = { cwd: spec.cwd, shell: false, windowsHide: true } as const;
  if (!USE_PROCESS_GROUP) {
    return spawn(spec.argv[0], spec.argv.slice(1), { ...common, env: spec.env, stdio: ['pipe', 'pipe', 'pipe'] });
  }
  const { NODE_OPTIONS, ...env } = spec.env;
  if (NODE_OPTIONS !== undefined) env.DURABLE_MCP_SERVER_NODE_OPTIONS = NODE_OPTIONS;
  const argv = ['-e', STDIO_SUPERVISOR_SOURCE, '--', String(spec.orphanGraceMs), ...spec.argv];
  return spawn(process.execPath, argv, { ...common, env, stdio: ['pipe', 'pipe', 'pipe', 'ipc'], detached: true });
}

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
  /**
   * Resolves with the server's pid once it runs, or undefined when it could not be started.
   * Settles before `exit`.
   */
  readonly started: Promise<number | undefined>;
  private markStarted!: (pid: number | undefined) => void;
  private serverPid: number | undefined;
  private spawnError: NodeJS.ErrnoException | undefined;
  private readonly child: ChildProcess;
  private readonly stdin: Writable;
  private readonly stderrTail: StdioStderrTail;
  private exitInfo: StdioExit | null = null;
  private closedReported = false;
  private shuttingDown: Promise<void> | null = null;

  constructor(
    spec: StdioSpawnSpec,
    private readonly handlers: StdioProcessHandlers,
  ) {
    this.stderrTail = new StdioStderrTail(spec.stderrLimitBytes);
    this.drained = new Promise<void>((resolve) => (this.markDrained = resolve));
    const decoder = new NdjsonDecoder(
      { line: (line) => handlers.line(line), overflow: (chars) => handlers.overflow(chars) },
      spec.maxMessageChars,
    );
    this.started = new Promise<number | undefined>((resolve) => (this.markStarted = resolve));
    this.child = spawnChild(spec);
    this.stdin = this.child.stdin as Writable;
    const stdout = this.child.stdout as Readable;
    const stderr = this.child.stderr as Readable;
    stdout.setEncoding('utf8');
    this.stdin.setDefaultEncoding('utf8');
    stdout.on('data', (chunk: string) => decoder.push(chunk));
    stdout.on('end', () => decoder.end());
    stderr.on('data', (chunk: Buffer) => this.stderrTail.push(chunk));
    for (const stream of [this.stdin, stdout, stderr]) stream.on('error', () => undefined);
    if (USE_PROCESS_GROUP) this.child.on('message', (report: StdioSupervisorReport) => this.onReport(report));
    else this.child.once('spawn', () => this.onReport({ pid: this.child.pid as number }));
    this.exit = new Promise<StdioExit>((resolve) => {
      this.child.on('error', (error: NodeJS.ErrnoException) => {
        if (this.child.pid === undefined) this.finish({ code: null, signal: null, spawnError: error }, resolve);
      });
      this.child.once('exit', (code, signal) => {
        // The supervisor's report may still be in the channel: the exit is read once it closed.
        if (this.child.connected) this.child.once('disconnect', () => this.finish(this.exitOf(code, signal), resolve));
        else this.finish(this.exitOf(code, signal), resolve);
      });
    });
    this.child.once('close', () => this.reportClosed());
  }

  /** The server's pid, once known; undefined before, and when it could not be started. */
  get pid(): number | undefined {
    return this.serverPid;
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
    const stdin = this.stdin;
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
      this.stdin.end();
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

  private onReport(report: StdioSupervisorReport): void {
    if (this.serverPid !== undefined || this.spawnError !== undefined) return;
    if ('pid' in report && typeof report.pid === 'number') {
      this.serverPid = report.pid;
      this.markStarted(report.pid);
    } else if ('spawnError' in report) {
      const error: NodeJS.ErrnoException = new Error(report.spawnError.message);
      if (report.spawnError.code) error.code = report.spawnError.code;
      this.spawnError = error;
      this.markStarted(undefined);
    }
  }

  private exitOf(code: number | null, signal: NodeJS.Signals | null): StdioExit {
    return this.spawnError ? { code: null, signal: null, spawnError: this.spawnError } : { code, signal };
  }

  /** The process group the shutdown signals: the server's (the supervisor reports its pid), or the supervisor's until then. */
  private groupLeader(): number | undefined {
    return this.serverPid ?? this.child.pid;
  }

  private signal(signal: NodeJS.Signals): void {
    const pid = this.groupLeader();
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
    const pid = this.groupLeader();
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
    this.markStarted(this.serverPid);
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
