import { Injectable, Logger, Optional, type BeforeApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { McpEventRejectedError } from '../../errors/mcp-event-rejected.errors';
import { McpDatabaseUnavailableError } from '../../errors/mcp-outage.errors';
import { McpEvent } from '../entities/mcp-event.entity';
import type { McpEventInput, McpEventSink } from '../interfaces/mcp-event-sink.interface';
import { newEventRecord } from '../new-records';
import { EntitySql, type McpCommitMode } from './entity-sql';
import { GroupCommitter } from '../group-committer';
import { isDependencyUnavailable } from '../database-failures';
import { DEFAULT_DATABASE_TIMEOUT_MS, withDatabaseDeadline } from '../database-deadline';
import type { McpStoreSettings } from '../interfaces/mcp-store-settings.interface';
import { InjectMcpStoreSettings } from '../mcp-persistence.constants';
import type { SpanContext } from '@opentelemetry/api';
import { activeSpanContext, mcpTelemetryActive, withAuditCommitSpan } from '../../telemetry/mcp-spans';

/** Longest part of a database's refusal kept in the error and the log line. */
const MAX_REASON = 300;

/**
 * Writes `mcp_events` rows. Rows are group-committed (one INSERT for every row that arrived while
 * the previous one was in flight; on PostgreSQL one prepared statement taking an array per
 * column); `record` resolves only once its own row is committed, so a response never gets ahead
 * of its audit row. With `auditCommit: 'async'` a batch commits with PostgreSQL's
 * `synchronous_commit` off: committed and visible, its WAL flush shared with the next batches.
 * Both the wait and each flush are bounded by `databaseTimeoutMs` (the client's settings leave it
 * out: the default applies): a stalled INSERT frees its lane for the next batch, and its callers
 * get `McpDatabaseUnavailableError`.
 *
 * Every row is made storable first (`newEventRecord`). Should the database still refuse a batch,
 * its rows are written again one by one: only a row refused on its own fails, with
 * `McpEventRejectedError`, logged with its id and method (never its payload). An unreachable or
 * stalled database is not a refusal: the batch fails at once.
 *
 * Each commit is an OpenTelemetry span (`mcp.audit.commit`, linked to the spans of its rows) and
 * feeds the batch size and commit latency histograms; without an SDK both cost nothing.
 */
@Injectable()
export class TypeOrmEventSink implements McpEventSink, BeforeApplicationShutdown {
  private readonly logger = new Logger('McpEventSink');
  private readonly committer: GroupCommitter<McpEvent, void>;
  private readonly sql: EntitySql<McpEvent>;
  private readonly timeoutMs: number;
  private readonly commit: McpCommitMode;
  /** The span each pending row was recorded under: its batch's commit span links to them. */
  private readonly origins = new WeakMap<McpEvent, SpanContext>();

  constructor(
    @InjectRepository(McpEvent) events: Repository<McpEvent>,
    @Optional() @InjectMcpStoreSettings() settings?: McpStoreSettings | null,
  ) {
    this.sql = new EntitySql(events.manager.connection, McpEvent);
    this.timeoutMs = settings?.databaseTimeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
    this.commit = settings?.auditCommit ?? 'sync';
    this.committer = new GroupCommitter(
      (rows) => withDatabaseDeadline(this.insert(rows), this.timeoutMs, 'audit row insert'),
      undefined,
      undefined,
      {
        // Something thrown that is not an object is no refusal of a row either.
        isRefusal: (error) => !!error && typeof error === 'object' && !isDependencyUnavailable(error),
        refused: (row, error) => this.refused(row, error),
      },
      // Each caller waits at most `databaseTimeoutMs` from its submit, queued or in a batch.
      { ms: this.timeoutMs, error: () => new McpDatabaseUnavailableError('audit row insert', this.timeoutMs) },
    );
  }

  /** Writes one event row; rejects when the database does (`McpEventRejectedError` when it refused this row). */
  record(event: McpEventInput): Promise<void> {
    const row = newEventRecord(event);
    const origin = activeSpanContext();
    if (origin) this.origins.set(row, origin);
    return this.committer.submit(row);
  }

  /** Rows submitted and not committed yet (the group committer's backlog). */
  get backlog(): number {
    return this.committer.backlog;
  }

  /**
   * Flushes at shutdown: waits (up to `databaseTimeoutMs`) until every row submitted so far is
   * committed, before the host's DataSource closes in `onApplicationShutdown`.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await withDatabaseDeadline(this.committer.idle(), this.timeoutMs, 'audit flush at shutdown').catch(
      (error: unknown) =>
        this.logger.error(
          `${this.committer.backlog} audit row(s) could not be flushed at shutdown: ${(error as Error)?.message ?? error}`,
        ),
    );
  }

  private insert(rows: McpEvent[]): Promise<void[]> {
    // Nothing records spans: the INSERT alone, with no span links gathered and no wrapping.
    if (!mcpTelemetryActive()) return this.sql.insert(rows, this.commit).then(() => new Array<void>(rows.length));
    const origins = rows
      .map((row) => this.origins.get(row))
      .filter((origin): origin is SpanContext => origin !== undefined);
    return withAuditCommitSpan(rows.length, origins, async () => {
      await this.sql.insert(rows, this.commit);
      return rows.map(() => undefined);
    });
  }

  private refused(row: McpEvent, error: unknown): McpEventRejectedError {
    const message = (error as Error)?.message ?? String(error);
    const reason = JSON.stringify(message.slice(0, MAX_REASON)).slice(1, -1);
    const rejected = new McpEventRejectedError(row.id, row.method, reason, { cause: error });
    this.logger.error(rejected.message);
    return rejected;
  }
}
