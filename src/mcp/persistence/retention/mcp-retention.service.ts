import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpResolvedRetention } from './mcp-retention.options';
import {
  RetentionPruner,
  retentionScopeLabel,
  type McpRetentionReport,
  type McpRetentionScope,
} from './retention-pruner';
import {
  BullRetentionSchedule,
  IntervalRetentionSchedule,
  type RetentionQueueSettings,
  type RetentionSchedule,
} from './retention-schedule';
import { McpRedisOutageLog } from '../../redis-outage-log';

/** How a mount or the client builds its `McpRetentionService`. */
export interface McpRetentionSettings {
  /** Whose rows it prunes. */
  scope: McpRetentionScope;
  /** The resolved `retention` option; null: off. */
  retention: McpResolvedRetention | null;
  /** The Bull queue of the schedule when the module has Redis; null: an interval of this process. */
  queue: RetentionQueueSettings | null;
}

/** How many run reports `history()` keeps. */
const HISTORY = 50;

/**
 * The retention pruner of one mount (`getMcpRetentionToken(mount)`, or `McpRetentionService`
 * inside the mount's module) or of the client (`MCP_CLIENT_RETENTION`). With the `retention`
 * option it runs once per `intervalMs` (a Bull repeatable job when the module has Redis, else an
 * unref'd timer) and logs what each run deleted; `runOnce()` runs it now, for operators and tests.
 */
export class McpRetentionService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger: Logger;
  private readonly label: string;
  private pruner: RetentionPruner | null = null;
  private schedule: RetentionSchedule | null = null;
  private running: Promise<McpRetentionReport> | null = null;
  private readonly reports: McpRetentionReport[] = [];

  /** @internal Built by the module's factory provider: a mount's or the client's settings, and the module to find the `DataSource` in. */
  constructor(
    private readonly settings: McpRetentionSettings,
    private readonly moduleRef: ModuleRef,
  ) {
    this.label = retentionScopeLabel(settings.scope);
    this.logger = new Logger(`McpRetention:${this.label}`);
  }

  /** Whether the `retention` option is set. */
  get enabled(): boolean {
    return this.settings.retention !== null;
  }

  /** The latest run reports, oldest first (at most 50). */
  history(): readonly McpRetentionReport[] {
    return [...this.reports];
  }

  /** Starts the schedule when the `retention` option is set (Nest calls it once the app is up). */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.settings.retention) return;
    this.prunerOf(this.settings.retention);
    const { queue } = this.settings;
    this.schedule = queue
      ? new BullRetentionSchedule(queue, this.settings.retention.intervalMs, new McpRedisOutageLog(this.logger))
      : new IntervalRetentionSchedule(this.settings.retention.intervalMs);
    await this.schedule.start(async () => {
      try {
        await this.runOnce();
      } catch (error) {
        this.logger.error(`Retention run failed: ${(error as Error).message}`);
      }
    });
  }

  /** Stops the schedule and waits for a run under way (Nest calls it when the app closes). */
  async onApplicationShutdown(): Promise<void> {
    await this.schedule?.close();
    this.schedule = null;
    await this.running?.catch(() => undefined);
  }

  /**
   * Runs the pruner now (a run already under way in this process is joined, not doubled) and
   * returns its report: `skipped: 'off'` without the `retention` option, `skipped: 'locked'` when
   * another replica is pruning the same scope.
   */
  runOnce(now?: Date): Promise<McpRetentionReport> {
    const retention = this.settings.retention;
    if (!retention) {
      return Promise.resolve({
        scope: this.label,
        skipped: 'off',
        tables: {},
        partitionsDropped: [],
        partitionsCreated: [],
        startedAt: now ?? new Date(),
        durationMs: 0,
      });
    }
    this.running ??= this.prunerOf(retention)
      .run(now)
      .then((report) => this.record(report))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private prunerOf(retention: McpResolvedRetention): RetentionPruner {
    if (this.pruner) return this.pruner;
    let dataSource: DataSource;
    try {
      dataSource = this.moduleRef.get(DataSource, { strict: false });
    } catch {
      throw new McpConfigurationError(
        `${this.label === 'client' ? 'McpClientModule' : `McpModule (${this.label.replace(':', ' "')}")`}: option "retention" needs the TypeORM DataSource of the app (TypeOrmModule.forRoot with MCP_ENTITIES).`,
      );
    }
    this.pruner = new RetentionPruner(dataSource, this.settings.scope, retention);
    return this.pruner;
  }

  private record(report: McpRetentionReport): McpRetentionReport {
    this.reports.push(report);
    if (this.reports.length > HISTORY) this.reports.shift();
    if (report.skipped) {
      this.logger.debug(`Retention run skipped (${report.skipped})`);
      return report;
    }
    const tables = Object.entries(report.tables)
      .filter(([, t]) => t.rows > 0)
      .map(([table, t]) => `${table}: ${t.rows} rows in ${t.batches} batches`);
    const partitions = [
      ...(report.partitionsDropped.length ? [`dropped partitions ${report.partitionsDropped.join(', ')}`] : []),
      ...(report.partitionsCreated.length ? [`created partitions ${report.partitionsCreated.join(', ')}`] : []),
    ];
    const summary = [...tables, ...partitions].join('; ');
    if (summary) this.logger.log(`Retention run deleted ${summary} (${report.durationMs} ms)`);
    else this.logger.debug(`Retention run found nothing to delete (${report.durationMs} ms)`);
    return report;
  }
}
