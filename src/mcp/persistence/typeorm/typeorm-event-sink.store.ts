import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { McpEvent } from '../entities/mcp-event.entity';
import type { McpEventInput, McpEventSink } from '../interfaces/mcp-event-sink.interface';
import { newEventRecord } from '../new-records';
import { EntitySql } from './entity-sql';
import { GroupCommitter } from '../group-committer';

/**
 * Writes `mcp_events` rows. Rows are group-committed (one multi-row INSERT for every row that
 * arrived while the previous one was in flight); `record` resolves only once its own row is
 * committed, so a response never gets ahead of its audit row.
 */
@Injectable()
export class TypeOrmEventSink implements McpEventSink {
  private readonly committer: GroupCommitter<McpEvent, void>;
  private readonly sql: EntitySql<McpEvent>;

  constructor(@InjectRepository(McpEvent) events: Repository<McpEvent>) {
    this.sql = new EntitySql(events.manager.connection, McpEvent);
    this.committer = new GroupCommitter((rows) => this.insert(rows));
  }

  /** Writes one event row; rejects when the database does. */
  record(event: McpEventInput): Promise<void> {
    const row = newEventRecord(event) as McpEvent;
    return this.committer.submit(row);
  }

  private async insert(rows: McpEvent[]): Promise<void[]> {
    await this.sql.insert(rows);
    return rows.map(() => undefined);
  }
}
