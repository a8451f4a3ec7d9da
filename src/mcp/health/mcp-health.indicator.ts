import { Inject, Injectable, type InjectionToken } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { HealthIndicatorFunction, HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { McpCallQueueHost } from '../client/queue/mcp-call-queue-host';
import { McpTransportRegistry } from '../client/transports/transport-registry';
import { StdioTransport } from '../client/transports/stdio/stdio.transport';
import { getMcpOptionsToken, getMcpTaskServiceToken } from '../mcp.constants';
import { withDatabaseDeadline } from '../persistence/database-deadline';
import type { McpEventSink } from '../persistence/interfaces/mcp-event-sink.interface';
import { MCP_EVENT_SINK } from '../persistence/mcp-persistence.constants';
import type { McpResolvedOptions } from '../server/config/mcp.options';
import { MCP_PUBSUB, type McpPubSub } from '../server/pubsub/mcp-pubsub.providers';
import { McpDrainService } from '../server/shutdown/mcp-drain.service';
import type { McpTaskQueueStats } from '../server/tasks/mcp-task.queue';
import type { McpTaskService } from '../server/tasks/mcp-tasks.service';
import { MCP_HEALTH_INDICATOR_SERVICE, MCP_HEALTH_OPTIONS } from './mcp-health.constants';
import type { McpResolvedHealthOptions } from './mcp-health.options';
import { failureText } from './redact-secrets';

/** Bound of the database round trip when neither the health options nor a mount give one. */
const FALLBACK_DATABASE_TIMEOUT_MS = 5000;

/** Resolves like `work`, or rejects with `message` once `timeoutMs` has passed. */
function withDeadline<T>(work: Promise<T>, timeoutMs: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), timeoutMs);
    timer.unref?.();
  });
  // A failure after the deadline won has nobody left to hear it.
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Health checks of the MCP module, built on terminus's `HealthIndicatorService`, for a host's
 * `@HealthCheck()` controller (or `McpHealthModule.forRoot({ path })`, which serves them).
 * Each check resolves to a terminus result, `up` or `down`, with details (latencies, counts) and
 * never a secret: errors are reported without credentials.
 *
 * ```ts
 * @Get('ready') @HealthCheck()
 * ready() { return this.health.check(this.mcp.readiness()); }
 * ```
 */
@Injectable()
export class McpHealthIndicator {
  /** @internal Built by `McpHealthModule`. */
  constructor(
    @Inject(MCP_HEALTH_INDICATOR_SERVICE) private readonly indicators: HealthIndicatorService,
    @Inject(MCP_HEALTH_OPTIONS) private readonly options: McpResolvedHealthOptions,
    private readonly drain: McpDrainService,
    private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * Every check that applies to this app, for readiness: the database, the session bus's Redis
   * (with the mount's `redis`), the client's call queue and stdio pools (with `McpClientModule`), the
   * audit backlog, the task queues (when some mount runs tasks), and the drain (down while the
   * app shuts down).
   */
  readiness(): HealthIndicatorFunction[] {
    return [...this.dependencies(), () => this.draining()];
  }

  /**
   * The checks of readiness that reach out (the database, Redis, the queues) or read shared
   * state, without the drain: what `McpHealthModule` runs at most once per `minIntervalMs`.
   */
  dependencies(): HealthIndicatorFunction[] {
    const checks: HealthIndicatorFunction[] = [() => this.database(), () => this.audit()];
    if (this.pubsub()?.ping) checks.push(() => this.redis());
    if (this.find<McpCallQueueHost>(McpCallQueueHost))
      checks.push(
        () => this.queue(),
        () => this.stdio(),
      );
    if (this.taskServices().length) checks.push(() => this.tasks());
    return checks;
  }

  /** Liveness: the process answers. It never depends on the database, Redis or the drain. */
  live(key = 'process'): HealthIndicatorResult {
    return this.indicators.check(key).up({ pid: process.pid, uptimeSeconds: Math.round(process.uptime()) });
  }

  /** A `SELECT 1` round trip through the app's DataSource, bounded by `database.timeoutMs`. */
  async database(key = 'database'): Promise<HealthIndicatorResult> {
    const check = this.indicators.check(key);
    const dataSource = this.find<DataSource>(getDataSourceToken());
    if (!dataSource) return check.up({ configured: false });
    const timeoutMs = this.databaseTimeoutMs();
    const started = Date.now();
    try {
      if (!dataSource.isInitialized) throw new Error('the DataSource is not initialized');
      await withDatabaseDeadline(dataSource.query('SELECT 1'), timeoutMs, 'health check');
      return check.up({ type: dataSource.options.type, latencyMs: Date.now() - started });
    } catch (error) {
      return check.down({
        type: dataSource.options.type,
        latencyMs: Date.now() - started,
        timeoutMs,
        message: failureText(error),
      });
    }
  }

  /** The session bus's Redis: the subscriber connection is up and a PING comes back. */
  async redis(key = 'redis'): Promise<HealthIndicatorResult> {
    const check = this.indicators.check(key);
    const pubsub = this.pubsub();
    if (!pubsub?.ping) return check.up({ configured: false });
    const started = Date.now();
    try {
      const { latencyMs, listening } = await pubsub.ping();
      if (!listening)
        return check.down({
          latencyMs,
          listening,
          message: 'the subscriber connection is down: messages from other replicas do not arrive',
        });
      return check.up({ latencyMs, listening });
    } catch (error) {
      return check.down({
        latencyMs: Date.now() - started,
        listening: pubsub.listening ?? false,
        message: failureText(error),
      });
    }
  }

  /**
   * The client's call queue: at least `queue.minWorkers` workers (Bull's registered workers, or
   * the inline worker) and no call waiting longer than `queue.maxWaitingAgeMs`.
   */
  async queue(key = 'queue'): Promise<HealthIndicatorResult> {
    const check = this.indicators.check(key);
    const host = this.find<McpCallQueueHost>(McpCallQueueHost);
    if (!host) return check.up({ configured: false });
    const { minWorkers, maxWaitingAgeMs } = this.options.queue;
    try {
      const stats = await host.queue.stats();
      const details = { ...stats, minWorkers, maxWaitingAgeMs };
      if (stats.workers < minWorkers)
        return check.down({
          ...details,
          message: `${stats.workers} worker(s) consume the queue, fewer than ${minWorkers}`,
        });
      if (stats.oldestWaitingMs !== null && stats.oldestWaitingMs > maxWaitingAgeMs) {
        return check.down({
          ...details,
          message: `the oldest waiting call has waited ${stats.oldestWaitingMs} ms, more than ${maxWaitingAgeMs} ms`,
        });
      }
      return check.up(details);
    } catch (error) {
      return check.down({ mode: host.queue.mode, message: failureText(error) });
    }
  }

  /**
   * The server's task queues: for every mount whose tasks started (a tool allows tasks), at
   * least `tasks.minWorkers` workers (Bull's registered workers on every replica, or the
   * in-process worker) and no task waiting longer than `tasks.maxWaitingAgeMs`. Details per
   * mount under `mounts`; up with no mount when no mount runs tasks.
   */
  async tasks(key = 'tasks'): Promise<HealthIndicatorResult> {
    const check = this.indicators.check(key);
    const { minWorkers, maxWaitingAgeMs, timeoutMs } = this.options.tasks;
    const mounts: Record<string, Partial<McpTaskQueueStats> & { message?: string }> = {};
    const problems: string[] = [];
    await Promise.all(
      this.taskServices().map(async ([mount, service]) => {
        try {
          const stats = await withDeadline(
            service.queueStats(),
            timeoutMs,
            `Redis did not answer within ${timeoutMs} ms`,
          );
          mounts[mount] = stats;
          if (stats.workers < minWorkers)
            problems.push(
              `mount "${mount}": ${stats.workers} worker(s) consume the task queue, fewer than ${minWorkers}`,
            );
          else if (stats.oldestWaitingMs !== null && stats.oldestWaitingMs > maxWaitingAgeMs) {
            problems.push(
              `mount "${mount}": the oldest waiting task has waited ${stats.oldestWaitingMs} ms, more than ${maxWaitingAgeMs} ms`,
            );
          }
        } catch (error) {
          const message = failureText(error);
          mounts[mount] = { message };
          problems.push(`mount "${mount}": the task queue cannot be read: ${message}`);
        }
      }),
    );
    const details = { mounts, minWorkers, maxWaitingAgeMs };
    if (problems.length) return check.down({ ...details, message: problems.sort().join('; ') });
    return check.up(details);
  }

  /** The stdio transports built so far: their processes and pools; down when a pool is stuck (a call waited longer than `stdio.stuckMs`). */
  async stdio(key = 'stdio'): Promise<HealthIndicatorResult> {
    const check = this.indicators.check(key);
    const registry = this.find<McpTransportRegistry>(McpTransportRegistry);
    const servers: Record<string, ReturnType<StdioTransport['stats']>> = {};
    const stuck: string[] = [];
    for (const [name, transport] of registry?.opened() ?? []) {
      if (!(transport instanceof StdioTransport)) continue;
      const stats = transport.stats();
      servers[name] = stats;
      if (stats.pool && stats.pool.waiting > 0 && (stats.pool.oldestWaitingMs ?? 0) > this.options.stdio.stuckMs)
        stuck.push(name);
    }
    if (stuck.length)
      return check.down({
        servers,
        stuck,
        message: `stdio pool(s) stuck for more than ${this.options.stdio.stuckMs} ms: ${stuck.join(', ')}`,
      });
    return check.up({ servers });
  }

  /** The audit rows waiting for the group committer; down above `audit.maxBacklog`. */
  async audit(key = 'audit'): Promise<HealthIndicatorResult> {
    const check = this.indicators.check(key);
    const sink = this.find<McpEventSink>(MCP_EVENT_SINK);
    const backlog = sink?.backlog;
    if (backlog === undefined) return check.up({ backlog: null });
    const { maxBacklog } = this.options.audit;
    if (backlog > maxBacklog)
      return check.down({ backlog, maxBacklog, message: `${backlog} audit rows wait for the database` });
    return check.up({ backlog, maxBacklog });
  }

  /** Down while the app drains (from the start of its shutdown): a load balancer stops sending it work. */
  draining(key = 'shutdown'): HealthIndicatorResult {
    const check = this.indicators.check(key);
    const { draining, since, inFlight } = this.drain.status();
    if (draining)
      return check.down({
        draining,
        since: since?.toISOString() ?? null,
        inFlight,
        message: 'the server is shutting down',
      });
    return check.up({ draining, inFlight });
  }

  private databaseTimeoutMs(): number {
    if (this.options.databaseTimeoutMs !== null) return this.options.databaseTimeoutMs;
    return (
      this.find<McpResolvedOptions>(getMcpOptionsToken(this.options.mount))?.database.timeoutMs ??
      FALLBACK_DATABASE_TIMEOUT_MS
    );
  }

  /** The task services of the app's mounts whose tasks started, by mount name. */
  private taskServices(): [string, McpTaskService][] {
    const found: [string, McpTaskService][] = [];
    for (const mount of this.drain.mountNames()) {
      const service = this.find<McpTaskService>(getMcpTaskServiceToken(mount));
      if (service?.queueStarted) found.push([mount, service]);
    }
    return found;
  }

  private pubsub(): McpPubSub | null {
    return this.find<McpPubSub>(MCP_PUBSUB);
  }

  /** A provider anywhere in the app, or null when the app does not have it. */
  private find<T>(token: InjectionToken): T | null {
    try {
      return this.moduleRef.get<unknown, T>(token as string, { strict: false });
    } catch {
      return null;
    }
  }
}
