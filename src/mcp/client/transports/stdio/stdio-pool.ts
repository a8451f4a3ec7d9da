import type { JsonRpcNotification, JsonRpcRequest } from '../../../protocol/jsonrpc';
import type { McpHandshakeInfo, McpTransportContext } from '../mcp-transport.interface';
import type { StdioConnection } from './stdio-connection';
import type { StdioDeadline } from './stdio-deadline';
import { stdioClosedError, withStdioDetails } from './stdio.errors';
import type { StdioExchange, StdioLauncher } from './stdio-launcher';
import type { McpStdioServerConfig } from '../../interfaces/mcp-server-config.interface';
import { observeGauge, recordStdioSpawn } from '../../../telemetry/mcp-metrics';
import { startInternalSpan } from '../../../telemetry/mcp-spans';
import { McpAttr } from '../../../telemetry/mcp-telemetry.constants';

/** What a pooled call produced. */
export interface StdioPooledOutcome extends StdioExchange {
  /** Set on the call that started the process. */
  handshake?: McpHandshakeInfo;
  /** stderr written by the process during this call (and its start-up, on the first call). */
  stderr: string;
}

interface Lease {
  connection: StdioConnection;
  handshake?: McpHandshakeInfo;
}

/** A snapshot of a stdio pool. */
export interface StdioPoolStats {
  /** Processes alive or starting, idle or busy. */
  size: number;
  /** `pool.max`. */
  max: number;
  /** Warm processes free for a call. */
  idle: number;
  /** Calls waiting for a free process. */
  waiting: number;
  /** How long the longest-waiting call has waited, in milliseconds, or null. */
  oldestWaitingMs: number | null;
}

/** Warm processes started for stateless requests: they never saw `initialize`. */
const STATELESS = new WeakSet<StdioConnection>();

/**
 * Warm, initialized processes of one stateless server, one request in flight per process. A
 * process that fails a call (timeout, crash, broken framing) is killed and a later call starts a
 * fresh one; idle processes are shut down after `idleMs`.
 */
export class StdioPool {
  private readonly idle: StdioConnection[] = [];
  private readonly idleTimers = new Map<StdioConnection, NodeJS.Timeout>();
  private readonly members = new Set<StdioConnection>();
  private readonly retiring = new Set<Promise<void>>();
  private waiters: Array<() => void> = [];
  private readonly waitingSince = new WeakMap<() => void, number>();
  private closed = false;
  /** The server this pool serves, learnt from its first call (for the pool size gauge). */
  private server: string | null = null;
  private readonly unobserve: () => void;

  constructor(
    private readonly launcher: StdioLauncher,
    private readonly options: Required<McpStdioServerConfig.Pool>,
  ) {
    this.unobserve = observeGauge('mcp.client.stdio.pool.size', () =>
      this.server === null ? [] : [{ value: this.members.size, attributes: { [McpAttr.ServerName]: this.server } }],
    );
  }

  /** Processes alive or starting, idle or busy. */
  get size(): number {
    return this.members.size;
  }

  /** Sizes of the pool, for health checks: processes, idle ones, callers waiting and the longest wait so far. */
  stats(): StdioPoolStats {
    const oldest = this.waiters.length ? this.waitingSince.get(this.waiters[0]) : undefined;
    return {
      size: this.members.size,
      max: this.options.max,
      idle: this.idle.length,
      waiting: this.waiters.length,
      oldestWaitingMs: oldest === undefined ? null : Date.now() - oldest,
    };
  }

  /** Runs one exchange on a warm process, starting one when none is free and `max` allows. */
  async run(
    message: JsonRpcRequest | JsonRpcNotification,
    rawRequest: string,
    context: McpTransportContext,
    deadline: StdioDeadline,
    stateless = false,
  ): Promise<StdioPooledOutcome> {
    this.server ??= context.server;
    const checkout = startInternalSpan('mcp.stdio.pool.checkout', {
      [McpAttr.ServerName]: context.server,
      'mcp.stdio.pool.size': this.members.size,
    });
    let lease: Lease;
    try {
      lease = await this.acquire(context, deadline, stateless);
    } catch (error) {
      checkout.end(error);
      throw error;
    }
    checkout.end();
    const { connection, handshake } = lease;
    const mark = handshake ? 0 : connection.process.stderrBytes;
    connection.attach(context);
    try {
      if (handshake) context.onHandshake?.(handshake);
      const exchange = await this.launcher.exchange(connection, message, rawRequest, deadline);
      connection.attach(null);
      const stderr = connection.process.stderr(mark);
      this.release(connection);
      return handshake ? { ...exchange, handshake, stderr } : { ...exchange, stderr };
    } catch (error) {
      connection.attach(null);
      // The caller does not wait for the shutdown of a live process; `close` does.
      void this.retire(connection);
      await this.launcher.settled(connection);
      throw this.launcher.toClientError(error, connection, 'request', mark, context.server, deadline);
    }
  }

  /** Shuts every process down, busy ones included, and refuses further calls. */
  async close(): Promise<void> {
    this.closed = true;
    this.unobserve();
    const shutdowns = [...this.members].map((connection) => this.retire(connection));
    for (const wake of this.waiters.splice(0)) wake();
    await Promise.all([...shutdowns, ...this.retiring]);
  }

  private async acquire(context: McpTransportContext, deadline: StdioDeadline, stateless: boolean): Promise<Lease> {
    for (;;) {
      if (this.closed) throw withStdioDetails(stdioClosedError(context.server), { stderr: '', pid: null });
      const warm = this.takeIdle(stateless);
      if (warm) return { connection: warm };
      if (this.members.size < this.options.max) return this.start(context, deadline, stateless);
      let wake: (() => void) | undefined;
      try {
        await deadline.race(
          new Promise<void>((resolve) => {
            this.waiters.push((wake = resolve));
            this.waitingSince.set(resolve, Date.now());
          }),
        );
      } catch (error) {
        this.waiters = this.waiters.filter((waiter) => waiter !== wake);
        throw this.launcher.toClientError(error, null, 'pool', 0, context.server, deadline);
      }
    }
  }

  private async start(context: McpTransportContext, deadline: StdioDeadline, stateless: boolean): Promise<Lease> {
    let connection: StdioConnection;
    const spawning = startInternalSpan('mcp.stdio.spawn', { [McpAttr.ServerName]: context.server });
    try {
      deadline.check();
      connection = this.launcher.spawn(context.server);
      recordStdioSpawn(context.server);
    } catch (error) {
      spawning.end(error);
      throw this.launcher.toClientError(error, null, 'spawn', 0, context.server, deadline);
    }
    this.members.add(connection);
    let phase: 'spawn' | 'initialize' = 'spawn';
    try {
      await this.launcher.started(connection, deadline);
      spawning.end();
      if (stateless) {
        STATELESS.add(connection);
        return { connection };
      }
      phase = 'initialize';
      // Shared by calls with different contexts: declare what any call may answer (or -32601).
      const handshake = await this.launcher.initialize(connection, this.launcher.capabilitiesFor(null), deadline);
      return { connection, handshake };
    } catch (error) {
      spawning.end(error);
      void this.retire(connection);
      await this.launcher.settled(connection);
      throw this.launcher.toClientError(error, connection, phase, 0, context.server, deadline);
    }
  }

  /** A warm process of the wanted era; idle ones of the other era are retired (the verdict changed). */
  private takeIdle(stateless: boolean): StdioConnection | undefined {
    for (let connection = this.idle.pop(); connection; connection = this.idle.pop()) {
      clearTimeout(this.idleTimers.get(connection));
      this.idleTimers.delete(connection);
      if (this.healthy(connection) && STATELESS.has(connection) === stateless) return connection;
      void this.retire(connection);
    }
    return undefined;
  }

  private healthy(connection: StdioConnection): boolean {
    return connection.usable && connection.invalidLines < this.options.maxInvalidLines;
  }

  private release(connection: StdioConnection): void {
    if (this.closed || !this.healthy(connection)) {
      void this.retire(connection);
      return;
    }
    this.idle.push(connection);
    const timer = setTimeout(() => void this.retire(connection), this.options.idleMs);
    timer.unref();
    this.idleTimers.set(connection, timer);
    this.wake();
  }

  private retire(connection: StdioConnection): Promise<void> {
    clearTimeout(this.idleTimers.get(connection));
    this.idleTimers.delete(connection);
    const at = this.idle.indexOf(connection);
    if (at !== -1) this.idle.splice(at, 1);
    const done = this.launcher.shutdown(connection);
    if (this.members.delete(connection)) {
      const tracked = done.finally(() => this.retiring.delete(tracked));
      this.retiring.add(tracked);
      this.wake();
    }
    return done;
  }

  private wake(): void {
    this.waiters.shift()?.();
  }
}
