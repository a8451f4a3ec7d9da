import { Injectable, Optional } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { McpEvent } from '../entities/mcp-event.entity';
import type { McpEventInput, McpEventSink } from '../interfaces/mcp-event-sink.interface';
import { newEventRecord } from '../new-records';
import { EntitySql } from './entity-sql';
import { GroupCommitter } from '../group-committer';
import { DEFAULT_DATABASE_TIMEOUT_MS, withDatabaseDeadline } from '../database-deadline';
import type { McpStoreSettings } from '../interfaces/mcp-store-settings.interface';
import { InjectMcpStoreSettings } from '../mcp-persistence.constants';

/**
 * Writes `mcp_events` rows. Rows are group-committed (one multi-row INSERT for every row that
 * arrived while the previous one was in flight); `record` resolves only once its own row is
 * committed, so a response never gets ahead of its audit row. Both the wait and each flush are
 * bounded by `databaseTimeoutMs` (the client side, which has no mount settings, uses the default):
 * a stalled INSERT frees its lane for the next batch, and its callers get
 * `McpDatabaseUnavailableError`.
 */
@Injectable()
export class TypeOrmEventSink implements McpEventSink {
  private readonly committer: GroupCommitter<McpEvent, void>;
  private readonly sql: EntitySql<McpEvent>;
  private readonly timeoutMs: number;

  constructor(@InjectRepository(McpEvent) events: Repository<McpEvent>, @Optional() @InjectMcpStoreSettings() settings?: McpStoreSettings | null) {
    this.sql = new EntitySql(events.manager.connection, McpEvent);
    this.timeoutMs = settings?.databaseTimeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
    this.committer = new GroupCommitter((rows) => withDatabaseDeadline(this.insert(rows), this.timeoutMs, 'audit row insert'));
  }

  /** Writes one event row; rejects when the database does. */
  record(event: McpEventInput): Promise<void> {
    const row = newEventRecord(event) as McpEvent;
    return withDatabaseDeadline(this.committer.submit(row), this.timeoutMs, 'audit row insert');
  }

  private async insert(rows: McpEvent[]): Promise<void[]> {
    await this.sql.insert(rows);
    return rows.map(() => undefined);
  }
}
