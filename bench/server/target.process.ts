import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { readCpuMs, readRssBytes } from './proc.stats';

/**
 * Loaded into every target with `--import`: the child exits as soon as its IPC channel to the
 * bench closes, so a bench that dies (even by SIGKILL) leaves no server behind. `process.exit`
 * (not a signal) also lets `--cpu-prof` write its profile. It also adds up the pauses of the
 * target's garbage collections (Node's `gc` performance entries) and tells the total when the
 * bench asks (`TargetProcess.gcMs`).
 */
const WATCHDOG = `data:text/javascript,${encodeURIComponent(
  [
    'import { PerformanceObserver } from "node:perf_hooks";',
    'process.on("disconnect", () => process.exit(0));',
    'let gcMs = 0;',
    'new PerformanceObserver((list) => { for (const entry of list.getEntries()) gcMs += entry.duration; }).observe({ entryTypes: ["gc"] });',
    'process.on("message", (message) => { if (message && typeof message === "object" && "benchGcProbe" in message) process.send({ benchGcProbe: message.benchGcProbe, gcMs }); });',
  ].join('\n'),
)}`;

/** The answer of a target's watchdog to a probe of its garbage collection time. */
interface GcAnswer {
  benchGcProbe: number;
  gcMs: number;
}

/** How many bytes of a target's stdout+stderr are kept for error messages. */
const OUTPUT_TAIL_BYTES = 4096;

/** How to start one benchmark target. */
export interface TargetSpec {
  /**
   * Short key, also accepted by BENCH_TARGETS: bare, bare-pg, bare-pg-async, sdk1, sdk2, mcpnest, ours, ours-fastify,
   * ours-async; baseline, baseline-fastify, baseline-async for an earlier commit (BENCH_BASELINE).
   */
  key: string;
  /** Name printed in result lines. */
  label: string;
  /** The floor (no MCP library at all), a peer the goals compare against, ours, or ours at an earlier commit. */
  role: 'floor' | 'peer' | 'ours' | 'baseline';
  /**
   * The key of the target of ours this one is measured right next to in every round: for a
   * baseline, the variant it is the earlier build of; for an audit floor, the variant it bounds.
   */
  mirrors?: string;
  /** Working directory of the target (its modules resolve from there); the repo root when unset. */
  cwd?: string;
  /** Whether the target refuses a request without the bench's bearer token. */
  checksToken: boolean;
  /** Whether the target writes to a bench database (its PostgreSQL backends are measured). */
  database: boolean;
  /** A caveat printed with the results (for example a switch the build does not know). */
  note?: string;
  /** Arguments after `node` and its options: a script path, or `-e <code>`. */
  args: string[];
  /** Environment variables set (or, when undefined, removed) on top of the bench's own. */
  env: Record<string, string | undefined>;
  /** Extra options for `node` itself (for example `--cpu-prof`). */
  nodeArgs?: string[];
  /** How long the target may take to answer HTTP on its port. */
  readyTimeoutMs: number;
  /** Bearer token sent with every request (targets without auth ignore it). */
  token: string;
  /**
   * How the target is driven: a 2025-11-25 session shared by every connection (the default), or
   * stateless 2026-07-28 calls that each carry their envelope (`ours-stateless`).
   */
  revision?: 'session' | 'stateless';
  /** The address the target listens on and is reached at. @default 127.0.0.1 */
  host?: string;
  /**
   * A command the target is started through, which must exec `node` in its own process (for
   * example `['ip', 'netns', 'exec', name]`), so the pid measured is the target's.
   */
  launcher?: string[];
}

/** Finds a TCP port on 127.0.0.1 that is free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not allocate a port'))));
    });
  });
}

function answersHttp(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host, port, path: '/mcp', method: 'GET', timeout: 1000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
    req.end();
  });
}

/** One running target: a child process serving MCP on its host (127.0.0.1 by default) and `port`. */
export class TargetProcess {
  private output = '';
  private gcProbes = 0;
  private exited: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private readonly exit: Promise<void>;

  private constructor(
    /** What was started. */
    readonly spec: TargetSpec,
    /** The port it listens on. */
    readonly port: number,
    private readonly child: ChildProcess,
  ) {
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    // An IPC channel torn down by the child's exit is expected; nothing to report.
    child.on('error', (error) => keep(Buffer.from(`\n[spawn error] ${error.message}\n`)));
    this.exit = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exited = { code, signal };
        resolve();
      }),
    );
  }

  /** Spawns the target and resolves once it answers HTTP; rejects with its output if it does not. */
  static async start(spec: TargetSpec, port: number, cwd: string): Promise<TargetProcess> {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: spec.host ?? '127.0.0.1' };
    for (const [name, value] of Object.entries(spec.env)) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
    const nodeArgs = [...(spec.nodeArgs ?? []), '--import', WATCHDOG, ...spec.args];
    const [command, ...args] = spec.launcher
      ? [...spec.launcher, process.execPath, ...nodeArgs]
      : [process.execPath, ...nodeArgs];
    const child = spawn(command, args, {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const target = new TargetProcess(spec, port, child);
    await target.waitUntilReady();
    return target;
  }

  /** The child's pid. */
  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Base URL of the MCP endpoint. */
  get url(): string {
    return `http://${this.host}:${this.port}/mcp`;
  }

  /** The address it listens on. */
  get host(): string {
    return this.spec.host ?? '127.0.0.1';
  }

  /** The last few KB the target printed. */
  get outputTail(): string {
    return this.output.trim();
  }

  /**
   * The time the target spent in garbage collection pauses since it started, in milliseconds (the
   * sum of its `gc` performance entries); null when it does not answer within a second.
   */
  gcMs(): Promise<number | null> {
    const probe = ++this.gcProbes;
    return new Promise((resolve) => {
      const done = (value: number | null) => {
        clearTimeout(timer);
        this.child.off('message', onMessage);
        resolve(value);
      };
      const onMessage = (message: unknown) => {
        const answer = message as Partial<GcAnswer> | null;
        if (answer?.benchGcProbe === probe && typeof answer.gcMs === 'number') done(answer.gcMs);
      };
      const timer = setTimeout(() => done(null), 1000);
      this.child.on('message', onMessage);
      if (!this.child.connected || !this.child.send({ benchGcProbe: probe })) done(null);
    });
  }

  /** Resident memory of the child now, in bytes. */
  rssBytes(): number | null {
    return readRssBytes(this.pid);
  }

  /** CPU time the child has used so far, in ms. */
  cpuMs(): number | null {
    return readCpuMs(this.pid);
  }

  /** Throws, with the target's output, when the child is no longer running. */
  assertAlive(): void {
    if (this.exited) throw new Error(`${this.describe()} exited (${this.exitText()}). Its output:\n${this.outputTail}`);
  }

  /**
   * Stops the child: closes the IPC channel (the watchdog exits), then SIGTERM, then SIGKILL,
   * each after a grace period. Resolves once it is gone.
   */
  async stop(graceMs = 5000): Promise<void> {
    if (this.exited) return;
    if (this.child.connected) this.child.disconnect();
    if (await this.exitedWithin(graceMs)) return;
    this.child.kill('SIGTERM');
    if (await this.exitedWithin(3000)) return;
    this.child.kill('SIGKILL');
    await this.exitedWithin(3000);
  }

  private async waitUntilReady(): Promise<void> {
    const deadline = Date.now() + this.spec.readyTimeoutMs;
    while (Date.now() < deadline) {
      this.assertAlive();
      if (await answersHttp(this.host, this.port)) return;
      await Promise.race([this.exit, new Promise((resolve) => setTimeout(resolve, 100))]);
    }
    this.assertAlive();
    await this.stop();
    throw new Error(
      `${this.describe()} did not answer on port ${this.port} within ${this.spec.readyTimeoutMs / 1000} s. Its output:\n${this.outputTail}`,
    );
  }

  private exitedWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    return Promise.race([this.exit.then(() => true), timeout]).finally(() => clearTimeout(timer));
  }

  private describe(): string {
    return `target ${this.spec.key} (${this.spec.label}, pid ${this.pid})`;
  }

  private exitText(): string {
    return this.exited?.signal ? `signal ${this.exited.signal}` : `exit code ${this.exited?.code}`;
  }
}
