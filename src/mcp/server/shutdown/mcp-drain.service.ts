import { Injectable, Logger, Optional, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import { InFlightSet } from '../../in-flight-set';
import { LazyAbort } from '../pipeline/lazy-abort';
import { HttpConnectionTracker } from './http-connection-tracker';
import { DEFAULT_QUIET_PERIOD_MS } from './mcp-shutdown.options';

/** How long a call aborted at the drain deadline may take to answer before the endpoint answers for it. */
export const DRAIN_ABORT_GRACE_MS = 2000;

/** One request being handled, as the drain sees it. */
export interface McpInFlightRequest {
  /** Fires at the drain deadline: the handler should stop. Made when first read. */
  readonly signal: AbortSignal;
  /** True once the drain deadline aborted the request (whatever else aborted it too). */
  readonly deadlineFired: boolean;
  /** The request's abort source: the one `enter` was given, or its own; the drain deadline aborts it. */
  readonly abort: LazyAbort;
  /** Settles when the handler had its grace after the abort and did not end: the endpoint answers for it. */
  readonly forced: Promise<void>;
  /**
   * Runs `listener` when the request is forced (at once when it already was); one listener per
   * request, a later one replaces it. Costs no promise, unlike `forced`.
   */
  whenForced(listener: () => void): void;
  /** The request was answered (or failed): it no longer holds the drain. */
  leave(): void;
}

interface MountDrain {
  drainTimeoutMs: number;
  quietPeriodMs: number;
  requests: InFlightSet<InFlightEntry>;
  idle: (() => void)[];
}

/**
 * A request tracked by the drain. Nothing is made for it until needed: its abort source makes a
 * signal only when one is read, its `forced` promise only when one is asked for.
 */
class InFlightEntry implements McpInFlightRequest {
  deadlineFired = false;
  private wasForced = false;
  private listener: (() => void) | null = null;
  private forcedPromise: Promise<void> | null = null;
  private resolveForced: (() => void) | null = null;

  constructor(
    private readonly mount: MountDrain,
    private readonly onActivity: () => void,
    readonly abort: LazyAbort,
  ) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get forced(): Promise<void> {
    this.forcedPromise ??= this.wasForced
      ? Promise.resolve()
      : new Promise<void>((resolve) => (this.resolveForced = resolve));
    return this.forcedPromise;
  }

  whenForced(listener: () => void): void {
    if (this.wasForced) listener();
    else this.listener = listener;
  }

  /** The drain deadline passed: aborts the request's source with `reason`. */
  expire(reason: Error): void {
    this.deadlineFired = true;
    this.abort.abort(reason);
  }

  /** The grace after the deadline passed too (the drain calls it once). */
  force(): void {
    this.wasForced = true;
    this.resolveForced?.();
    this.listener?.();
  }

  leave(): void {
    const drain = this.mount;
    if (!drain.requests.delete(this)) return;
    this.onActivity();
    if (drain.requests.size === 0) for (const wake of drain.idle.splice(0)) wake();
  }
}

/**
 * The app-wide draining state of the MCP mounts. When the app shuts down (its `onModuleDestroy`,
 * which Nest runs before any `beforeApplicationShutdown` or `onApplicationShutdown`) it sets
 * `draining`, so readiness fails and every mount refuses new sessions and new requests with 503
 * and `Retry-After`, then waits for the requests in flight, and for a quiet period without new
 * ones (`shutdown.quietPeriodMs`), each mount up to its `shutdown.drainTimeoutMs`. Past the deadline the calls still running are aborted (their signal
 * fires) and answered: they keep their audit rows. Only then do streams end, the audit rows
 * flush, queues close and stdio children end (each in its provider's later hook).
 *
 * On an HTTP app it also closes the server without resetting a connection: from the first moment
 * of the drain every response carries `Connection: close`; the listener keeps answering (503 for
 * new work) until Nest closes the HTTP server, and then stops accepting and closes each
 * connection only once it answered, or stayed idle for the quiet period, before the adapter's own
 * close runs (see `HttpConnectionTracker`).
 *
 * One instance per app, shared by every mount and the health module.
 */
@Injectable()
export class McpDrainService implements OnModuleDestroy, OnApplicationBootstrap {
  private readonly logger = new Logger('McpDrain');
  private readonly mounts = new Map<string, MountDrain>();
  private startedAt: Date | null = null;
  private drained: Promise<void> | null = null;
  /** When a request last arrived, ended or was refused (Date.now()). */
  private lastActivity = 0;
  /** Notes activity now: one function for every tracked request. */
  private readonly touch = (): void => {
    this.lastActivity = Date.now();
  };
  /** Requests refused since the drain began. */
  private refusals = 0;
  private connections: HttpConnectionTracker | null = null;
  /** Set at the end of the drain while the listener waits to close: refusals are sent once it settles. */
  private listenerClosing: Promise<void> | null = null;

  /** @internal Built by the drain module that every mount imports. */
  constructor(@Optional() private readonly adapterHost?: HttpAdapterHost) {}

  /** True once the app started to shut down (or `drain()` was called). */
  get draining(): boolean {
    return this.startedAt !== null;
  }

  /** The state of the drain. */
  status(): McpDrainService.Status {
    let inFlight = 0;
    for (const mount of this.mounts.values()) inFlight += mount.requests.size;
    return { draining: this.draining, since: this.startedAt, inFlight };
  }

  /** The names of the app's mounts (each registers here at boot), for the health checks that look at every mount. */
  mountNames(): string[] {
    return [...this.mounts.keys()];
  }

  /** @internal Registers a mount, its drain deadline and quiet period (its endpoint does, at boot). */
  register(mount: string, drainTimeoutMs: number, quietPeriodMs: number): void {
    const drain = this.mountOf(mount);
    drain.drainTimeoutMs = drainTimeoutMs;
    drain.quietPeriodMs = quietPeriodMs;
  }

  /** @internal A request was refused because the app drains: the drain waits for the refusals to stop. */
  refused(): void {
    this.lastActivity = Date.now();
    this.refusals++;
  }

  /**
   * @internal Resolves when a refusal may be sent: at once, except at the very end of the drain,
   * when the listener waits for callers to stop connecting before it closes.
   */
  beforeRefusing(): Promise<void> {
    return this.listenerClosing ?? Promise.resolve();
  }

  /**
   * @internal Tracks one request of the mount until `leave()`. At the drain deadline `abort` (the
   * request's own abort source, when the caller has one; else a new one) aborts.
   */
  enter(mount: string, abort?: LazyAbort): McpInFlightRequest {
    const drain = this.mountOf(mount);
    const entry = new InFlightEntry(drain, this.touch, abort ?? new LazyAbort());
    drain.requests.add(entry);
    this.lastActivity = Date.now();
    return entry;
  }

  /**
   * Starts draining (once; later calls get the same promise): refuses new work from now on and
   * resolves when every mount's requests ended or were aborted and answered. A host may call it
   * itself (a preStop hook); the app's shutdown calls it anyway.
   */
  drain(): Promise<void> {
    this.drained ??= this.run();
    return this.drained;
  }

  /**
   * Tracks the connections of the app's HTTP server (none in a standalone application context),
   * and puts their graceful close in front of the adapter's close, which Nest calls after every
   * `beforeApplicationShutdown` hook: streams have ended by then, and a connection that carried
   * one is closed only once idle, not while its client may be sending its next request.
   */
  onApplicationBootstrap(): void {
    const adapter = this.adapterHost?.httpAdapter;
    const server = adapter?.getHttpServer() as Server | undefined;
    if (!adapter || !server || typeof server.on !== 'function' || this.connections) return;
    const connections = new HttpConnectionTracker(server);
    this.connections = connections;
    const closeAdapter = adapter.close.bind(adapter) as () => Promise<unknown>;
    adapter.close = async () => {
      const idleMs = this.quietPeriodMs();
      await connections.close(idleMs, idleMs + DRAIN_ABORT_GRACE_MS);
      await closeAdapter();
    };
  }

  /** Nest's first shutdown hook: drains before any module tears down what calls in flight still use. */
  onModuleDestroy(): Promise<void> {
    return this.drain();
  }

  private async run(): Promise<void> {
    this.startedAt = new Date();
    this.connections?.startDraining();
    const { inFlight } = this.status();
    if (inFlight > 0)
      this.logger.log(`Draining: ${inFlight} request(s) in flight; new sessions and requests are refused with 503`);
    await Promise.all([...this.mounts.entries()].map(([name, mount]) => this.drainMount(name, mount)));
    await this.stopListening();
  }

  /**
   * Closes the listener once the drain is over, so that clients go to another replica instead of
   * meeting a closed socket later. When the drain refused requests, its clients may still be
   * connecting: the refusals are held until no connection arrived for the quiet period, then the
   * listener closes and they go out; a client that comes back then is refused a connection, and
   * sent nothing. A drain that refused nothing closes the listener at once.
   */
  private async stopListening(): Promise<void> {
    const connections = this.connections;
    if (!connections) return;
    if (this.refusals > 0) {
      let settled!: () => void;
      this.listenerClosing = new Promise((resolve) => (settled = resolve));
      const quietMs = this.quietPeriodMs();
      await connections.acceptQuiet(quietMs, quietMs + DRAIN_ABORT_GRACE_MS);
      connections.stopAccepting();
      settled();
    } else {
      connections.stopAccepting();
    }
  }

  private async drainMount(name: string, mount: MountDrain): Promise<void> {
    const deadline = Date.now() + mount.drainTimeoutMs;
    // The quiet period only matters under traffic: a drain with nothing in flight and nothing refused closes at once.
    const busy = mount.requests.size > 0;
    if (
      (await this.idleWithin(mount, mount.drainTimeoutMs)) &&
      ((!busy && this.refusals === 0) || (await this.quietBefore(mount, deadline)))
    )
      return;
    const left = [...mount.requests];
    if (left.length === 0) return; // requests kept arriving (and were refused) until the deadline: nothing to abort
    this.logger.warn(
      `Mount "${name}": ${left.length} request(s) still running after shutdown.drainTimeoutMs (${mount.drainTimeoutMs} ms): aborting them`,
    );
    for (const request of left)
      request.expire(new Error('The server is shutting down: the call ran past the drain deadline'));
    if (await this.idleWithin(mount, DRAIN_ABORT_GRACE_MS)) return;
    for (const request of mount.requests) request.force();
    if (!(await this.idleWithin(mount, DRAIN_ABORT_GRACE_MS))) {
      this.logger.error(`Mount "${name}": ${mount.requests.size} request(s) could not be answered before shutdown`);
    }
  }

  /**
   * Waits until no request arrived, ended or was refused for the mount's quiet period, with no
   * request in flight; false when the deadline comes first.
   */
  private async quietBefore(mount: MountDrain, deadline: number): Promise<boolean> {
    for (;;) {
      const now = Date.now();
      const quietFor = now - this.lastActivity;
      if (quietFor >= mount.quietPeriodMs && mount.requests.size === 0) return true;
      if (now >= deadline) return false;
      if (mount.requests.size > 0 && !(await this.idleWithin(mount, deadline - now))) return false;
      const wait = Math.min(Math.max(mount.quietPeriodMs - (Date.now() - this.lastActivity), 1), deadline - Date.now());
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  private idleWithin(mount: MountDrain, ms: number): Promise<boolean> {
    if (mount.requests.size === 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        const at = mount.idle.indexOf(wake);
        if (at !== -1) mount.idle.splice(at, 1);
        resolve(mount.requests.size === 0);
      }, ms);
      mount.idle.push(wake);
    });
  }

  /** The longest quiet period of the mounts: how long an idle connection stays open once the server closes. */
  private quietPeriodMs(): number {
    const periods = [...this.mounts.values()].map((mount) => mount.quietPeriodMs);
    return periods.length > 0 ? Math.max(...periods) : DEFAULT_QUIET_PERIOD_MS;
  }

  private mountOf(mount: string): MountDrain {
    let drain = this.mounts.get(mount);
    if (!drain) {
      drain = { drainTimeoutMs: 10_000, quietPeriodMs: DEFAULT_QUIET_PERIOD_MS, requests: new InFlightSet(), idle: [] };
      this.mounts.set(mount, drain);
    }
    return drain;
  }
}

/** What `McpDrainService.status()` returns: `McpDrainService.Status`. */
export declare namespace McpDrainService {
  /** What the drain of the app is doing, for health checks and logs. */
  export interface Status {
    /** True from the first moment of the shutdown. */
    draining: boolean;
    /** When the drain began, or null. */
    since: Date | null;
    /** Requests still being handled, all mounts together. */
    inFlight: number;
  }
}
