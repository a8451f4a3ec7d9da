import { setTimeout as delay } from 'node:timers/promises';
import type { DataSource, EntityTarget, ObjectLiteral, QueryRunner } from 'typeorm';
import { McpEvent } from '../entities/mcp-event.entity';
import { McpInboundSession } from '../entities/inbound-session.entity';
import { McpOutboundSession } from '../entities/outbound-session.entity';
import { McpResourceSubscription } from '../entities/resource-subscription.entity';
import { McpTask } from '../entities/task.entity';
import { escapedTableOf } from '../typeorm/entity-sql';
import type { McpResolvedRetention } from './mcp-retention.options';
import { EventPartitions } from './event-partitions';

/** Whose rows a pruner deletes: one mount's (inbound events, sessions, tasks) or the client's (outbound events and sessions). */
export type McpRetentionScope = { kind: 'mount'; mount: string; idleTtlMs: number } | { kind: 'client' };

/** What one table lost in one run. */
export interface McpRetentionTableReport {
  /** Rows deleted (for events in partition mode: rows deleted by statement, not those of dropped partitions). */
  rows: number;
  /** Statements that deleted at least one row. */
  batches: number;
}

/** What one run of a pruner did. */
export interface McpRetentionReport {
  /** `mount:<name>` or `client`. */
  scope: string;
  /** `'locked'`: another replica held the pruning lock; `'off'`: no `retention` option. Either way nothing was deleted. */
  skipped?: 'locked' | 'off';
  /** Rows and batches per table (`mcp_events`, `mcp_inbound_sessions`, `mcp_resource_subscriptions`, `mcp_tasks`, `mcp_outbound_sessions`). */
  tables: Record<string, McpRetentionTableReport>;
  /** Day partitions of `mcp_events` dropped (partition mode). */
  partitionsDropped: string[];
  /** Day partitions of `mcp_events` created ahead (partition mode). */
  partitionsCreated: string[];
  /** When the run started. */
  startedAt: Date;
  /** How long it took, in milliseconds. */
  durationMs: number;
}

/** The label of a scope in reports, logs, lock keys and queue names. */
export function retentionScopeLabel(scope: McpRetentionScope): string {
  return scope.kind === 'mount' ? `mount:${scope.mount}` : 'client';
}

const POSTGRES_TYPES = ['postgres', 'aurora-postgres', 'cockroachdb'];

/**
 * Deletes what a retention option lets go, in bounded batches: each statement deletes at most
 * `batchSize` rows chosen by a LIMITed subquery, in its own short transaction, and the pruner
 * pauses between statements, so no lock is held long enough for the hot path to notice. On
 * PostgreSQL the whole run holds a session advisory lock on a dedicated connection: a replica
 * that finds it taken skips the run. SQLite has one process and no lock.
 */
export class RetentionPruner {
  private readonly postgres: boolean;
  private readonly label: string;
  private readonly partitions: EventPartitions | null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly scope: McpRetentionScope,
    private readonly retention: McpResolvedRetention,
  ) {
    this.postgres = POSTGRES_TYPES.includes(String(dataSource.options.type));
    this.label = retentionScopeLabel(scope);
    this.partitions = this.postgres && retention.events !== null ? new EventPartitions(dataSource) : null;
  }

  /** Runs once: takes the lock (PostgreSQL), deletes batch after batch, and reports. */
  async run(now: Date = new Date()): Promise<McpRetentionReport> {
    const report: McpRetentionReport = {
      scope: this.label,
      tables: {},
      partitionsDropped: [],
      partitionsCreated: [],
      startedAt: now,
      durationMs: 0,
    };
    const started = Date.now();
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    let locked = false;
    try {
      if (this.postgres) {
        const rows = (await runner.query(`SELECT pg_try_advisory_lock(hashtext($1)::bigint) AS locked`, [
          `durable-mcp:retention:${this.label}`,
        ])) as { locked: boolean }[];
        locked = rows[0]?.locked === true;
        if (!locked) {
          report.skipped = 'locked';
          return report;
        }
      }
      await this.prune(runner, now, report);
    } finally {
      try {
        if (locked)
          await runner.query(`SELECT pg_advisory_unlock(hashtext($1)::bigint)`, [
            `durable-mcp:retention:${this.label}`,
          ]);
      } finally {
        await runner.release();
        report.durationMs = Date.now() - started;
      }
    }
    return report;
  }

  private async prune(runner: QueryRunner, now: Date, report: McpRetentionReport): Promise<void> {
    const { events, sessions, tasks, outboundSessions } = this.retention;
    const at = (ms: number): Date => new Date(now.getTime() - ms);
    if (events !== null) {
      if (this.partitions && (await this.partitions.isPartitioned(runner))) {
        report.partitionsCreated.push(...(await this.partitions.createAhead(runner, now)));
        report.partitionsDropped.push(...(await this.partitions.dropBefore(runner, at(events))));
      }
      await this.deleteEvents(runner, at(events), report);
    }
    if (this.scope.kind === 'mount') {
      if (sessions !== null)
        await this.deleteSessions(runner, this.scope, at(sessions), at(sessions + this.scope.idleTtlMs), report);
      await this.deleteTasks(runner, this.scope.mount, at(tasks ?? 0), report);
    } else if (outboundSessions !== null) {
      await this.deleteOutboundSessions(runner, at(outboundSessions), report);
    }
  }

  private mark(i: number): string {
    return this.postgres ? `$${i}` : '?';
  }

  /** A Date as the driver writes the given column (local time on PostgreSQL, a UTC string on SQLite). */
  private time(entity: EntityTarget<ObjectLiteral>, property: string, value: Date): unknown {
    const column = this.dataSource.getMetadata(entity).findColumnWithPropertyName(property);
    return column ? this.dataSource.driver.preparePersistentValue(value, column) : value;
  }

  private tally(report: McpRetentionReport, table: string, rows: number): void {
    const entry = (report.tables[table] ??= { rows: 0, batches: 0 });
    entry.rows += rows;
    if (rows > 0) entry.batches += 1;
  }

  /**
   * Runs `batch` (one short transaction each) until it deletes fewer than `batchSize` rows. Between
   * two batches it pauses `batchPauseMs`, and at least as long as the batch took, so the pruner
   * keeps its database backend busy half of the time at most, whatever the machine.
   */
  private async inBatches(
    runner: QueryRunner,
    batch: () => Promise<number>,
    onRows: (rows: number) => void,
  ): Promise<void> {
    for (;;) {
      const started = Date.now();
      await runner.startTransaction();
      let rows: number;
      try {
        rows = await batch();
        await runner.commitTransaction();
      } catch (error) {
        await runner.rollbackTransaction();
        throw error;
      }
      onRows(rows);
      if (rows < this.retention.batchSize) return;
      const pause = Math.max(this.retention.batchPauseMs, Date.now() - started);
      if (pause > 0) await delay(pause);
    }
  }

  private async affected(runner: QueryRunner, sql: string, params: unknown[]): Promise<number> {
    const result = await runner.query(sql, params, true);
    return Number(result.affected ?? 0);
  }

  /**
   * `DELETE ... WHERE id IN (SELECT id ... LIMIT n)` over one table; `outer` (with its own
   * parameters, placed first) narrows the outer statement too.
   */
  private deleteWhere(
    runner: QueryRunner,
    table: string,
    where: string,
    params: unknown[],
    outer?: { where: string; params: unknown[] },
  ): Promise<number> {
    return this.affected(
      runner,
      `DELETE FROM ${table} WHERE ${outer ? `${outer.where} AND ` : ''}"id" IN (SELECT "id" FROM ${table} WHERE ${where} LIMIT ${this.retention.batchSize})`,
      [...(outer?.params ?? []), ...params],
    );
  }

  private async deleteEvents(runner: QueryRunner, before: Date, report: McpRetentionReport): Promise<void> {
    const table = escapedTableOf(this.dataSource, McpEvent);
    const cutoff = this.time(McpEvent, 'createdAt', before);
    const [where, params] =
      this.scope.kind === 'mount'
        ? [
            `"created_at" < ${this.mark(1)} AND "direction" = 'inbound' AND "mount" = ${this.mark(2)}`,
            [cutoff, this.scope.mount],
          ]
        : [`"created_at" < ${this.mark(1)} AND "direction" = 'outbound'`, [cutoff]];
    // The outer DELETE repeats the cutoff: with day partitions, its lookups of the chosen ids then
    // visit only the partitions older than the cutoff, instead of probing every day's index (on
    // PostgreSQL `$1` is the cutoff already bound; SQLite's `?` takes it again).
    const outer = this.postgres
      ? { where: `"created_at" < $1`, params: [] }
      : { where: `"created_at" < ?`, params: [cutoff] };
    await this.inBatches(
      runner,
      () => this.deleteWhere(runner, table, where, params, outer),
      (rows) => this.tally(report, 'mcp_events', rows),
    );
  }

  private async deleteTasks(
    runner: QueryRunner,
    mount: string,
    before: Date,
    report: McpRetentionReport,
  ): Promise<void> {
    const table = escapedTableOf(this.dataSource, McpTask);
    const where = `"expires_at" IS NOT NULL AND "expires_at" < ${this.mark(1)} AND "mount" = ${this.mark(2)}`;
    const params = [this.time(McpTask, 'expiresAt', before), mount];
    await this.inBatches(
      runner,
      () => this.deleteWhere(runner, table, where, params),
      (rows) => this.tally(report, 'mcp_tasks', rows),
    );
  }

  private async deleteOutboundSessions(runner: QueryRunner, before: Date, report: McpRetentionReport): Promise<void> {
    const table = escapedTableOf(this.dataSource, McpOutboundSession);
    // Establishing, changing and closing a session all set `updated_at`.
    const where = `"updated_at" < ${this.mark(1)}`;
    const params = [this.time(McpOutboundSession, 'updatedAt', before)];
    await this.inBatches(
      runner,
      () => this.deleteWhere(runner, table, where, params),
      (rows) => this.tally(report, 'mcp_outbound_sessions', rows),
    );
  }

  /**
   * Sessions of the mount that ended before `endedBefore`, or were last seen before
   * `seenBefore` (idle expiry plus the retention) and never ended, with their subscriptions.
   */
  private async deleteSessions(
    runner: QueryRunner,
    scope: { mount: string },
    endedBefore: Date,
    seenBefore: Date,
    report: McpRetentionReport,
  ): Promise<void> {
    const sessions = escapedTableOf(this.dataSource, McpInboundSession);
    const subscriptions = escapedTableOf(this.dataSource, McpResourceSubscription);
    const ended = this.time(McpInboundSession, 'terminatedAt', endedBefore);
    const seen = this.time(McpInboundSession, 'lastSeenAt', seenBefore);
    const n = this.retention.batchSize;
    if (this.postgres) {
      // One statement: the chosen sessions, their subscriptions, then the sessions themselves.
      const sql = `WITH doomed AS (
          SELECT "id", "session_id" FROM ${sessions}
          WHERE "mount" = $1 AND (("terminated_at" IS NOT NULL AND "terminated_at" < $2) OR ("terminated_at" IS NULL AND "last_seen_at" < $3))
          LIMIT ${n} FOR UPDATE SKIP LOCKED),
        subs AS (DELETE FROM ${subscriptions} WHERE "mount" = $1 AND "session_id" IN (SELECT "session_id" FROM doomed) RETURNING 1),
        gone AS (DELETE FROM ${sessions} WHERE "id" IN (SELECT "id" FROM doomed) RETURNING 1)
        SELECT (SELECT count(*) FROM gone)::int AS sessions, (SELECT count(*) FROM subs)::int AS subscriptions`;
      await this.inBatches(
        runner,
        async () => {
          const rows = (await runner.query(sql, [scope.mount, ended, seen])) as {
            sessions: number;
            subscriptions: number;
          }[];
          this.tally(report, 'mcp_resource_subscriptions', rows[0].subscriptions);
          return rows[0].sessions;
        },
        (rows) => this.tally(report, 'mcp_inbound_sessions', rows),
      );
      return;
    }
    // SQLite: two statements in one transaction pick the same sessions (ordered by id; writers are serialized).
    const chosen = `SELECT "id", "session_id" FROM ${sessions} WHERE "mount" = ? AND (("terminated_at" IS NOT NULL AND "terminated_at" < ?) OR ("terminated_at" IS NULL AND "last_seen_at" < ?)) ORDER BY "id" LIMIT ${n}`;
    const params = [scope.mount, ended, seen];
    await this.inBatches(
      runner,
      async () => {
        const subs = await this.affected(
          runner,
          `DELETE FROM ${subscriptions} WHERE "mount" = ? AND "session_id" IN (SELECT "session_id" FROM (${chosen}))`,
          [scope.mount, ...params],
        );
        this.tally(report, 'mcp_resource_subscriptions', subs);
        return this.affected(runner, `DELETE FROM ${sessions} WHERE "id" IN (SELECT "id" FROM (${chosen}))`, params);
      },
      (rows) => this.tally(report, 'mcp_inbound_sessions', rows),
    );
  }
}
