import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository, SelectQueryBuilder } from 'typeorm';
import { McpEvent } from '../persistence/entities/mcp-event.entity';
import { McpInboundSession } from '../persistence/entities/inbound-session.entity';
import { McpTask } from '../persistence/entities/task.entity';
import { isSessionIdle } from '../persistence/session-liveness';
import { withDatabaseOutage } from '../persistence/database-deadline';
import { MCP_CONSOLE_OPTIONS } from './mcp-console.constants';
import type { McpConsoleResolvedOptions, McpConsoleScope } from './mcp-console.options';
import type {
  McpConsoleCursor,
  McpConsoleEventFilter,
  McpConsoleEvent,
  McpConsolePage,
  McpConsoleSession,
  McpConsoleTask,
  McpConsoleThroughput,
} from './mcp-console-records.interface';
import { isFailedEvent, throughputOf } from './throughput';

/** Most `mcp_events` rows the chart reads for its hour. */
export const MAX_CHART_ROWS = 20_000;

/** The window of the chart, in minutes. */
export const CHART_MINUTES = 60;

/**
 * The read side of the audit trail: sessions, events and tasks for the console, through TypeORM
 * on PostgreSQL or SQLite. Every query is bounded: pages are keyset pages (`created_at`, `id`)
 * of at most `pageSize` rows walking the `created_at` indexes newest first, the chart reads one
 * hour of a few columns and at most `MAX_CHART_ROWS` rows, and each query is bounded by
 * `timeoutMs` (`McpDatabaseUnavailableError` past it, or with the database away). It never writes.
 * Each method takes a `scope` (`'all'` by default): with `{ principalKeys }` it reads only the rows
 * of those principals, so a reader of a scoped console never meets another principal's row.
 */
@Injectable()
export class McpAuditQuery {
  /** @internal Built by `McpConsoleModule`. */
  constructor(
    @InjectRepository(McpEvent) private readonly events: Repository<McpEvent>,
    @InjectRepository(McpInboundSession) private readonly sessions: Repository<McpInboundSession>,
    @InjectRepository(McpTask) private readonly tasks: Repository<McpTask>,
    @Inject(MCP_CONSOLE_OPTIONS) private readonly options: McpConsoleResolvedOptions,
  ) {}

  /** A page of inbound sessions (of the principals in `scope`), newest first. */
  async sessionPage(
    before: McpConsoleCursor | null,
    now: number = Date.now(),
    scope: McpConsoleScope = 'all',
  ): Promise<McpConsolePage<McpConsoleSession>> {
    const qb = this.sessions.createQueryBuilder('s');
    if (this.options.mount !== null) qb.andWhere('s.mount = :mount', { mount: this.options.mount });
    applyScope(qb, 's', scope);
    const page = await this.keysetPage(qb, 's', before);
    return {
      next: page.next,
      rows: page.rows.map((s) => ({
        id: s.id,
        mount: s.mount,
        principalKey: s.principalKey,
        principalLabel: s.principalLabel,
        clientName: stringOrNull(s.clientInfo?.name),
        clientVersion: stringOrNull(s.clientInfo?.version),
        protocolVersion: s.protocolVersion,
        createdAt: s.createdAt,
        lastSeenAt: s.lastSeenAt,
        terminatedAt: s.terminatedAt,
        state: s.terminatedAt ? 'ended' : isSessionIdle(s.lastSeenAt, this.options.idleTtlMs, now) ? 'expired' : 'live',
      })),
    };
  }

  /** A page of audit rows matching `filter` (of the principals in `scope`), newest first. */
  async eventPage(
    filter: McpConsoleEventFilter,
    before: McpConsoleCursor | null,
    scope: McpConsoleScope = 'all',
  ): Promise<McpConsolePage<McpConsoleEvent>> {
    const qb = this.events.createQueryBuilder('e');
    this.scopeEvents(qb, scope);
    if (filter.principal !== undefined) qb.andWhere('e.principalKey = :principal', { principal: filter.principal });
    if (filter.method !== undefined) qb.andWhere('e.method = :method', { method: filter.method });
    if (filter.tool !== undefined)
      qb.andWhere(`e.method = 'tools/call' AND ${this.toolNameSql('e.request')} = :tool`, { tool: filter.tool });
    if (filter.status === 'error') qb.andWhere('(e.errorCode IS NOT NULL OR e.isError = TRUE OR e.status >= 400)');
    if (filter.status === 'ok')
      qb.andWhere('(e.errorCode IS NULL AND e.isError = FALSE AND (e.status IS NULL OR e.status < 400))');
    if (filter.from) qb.andWhere('e.createdAt >= :from', { from: filter.from });
    if (filter.to) qb.andWhere('e.createdAt < :to', { to: filter.to });
    const page = await this.keysetPage(qb, 'e', before);
    return { next: page.next, rows: page.rows.map(toEventRow) };
  }

  /** One audit row by id (within the console's mount and `scope`), or null. */
  async event(id: string, scope: McpConsoleScope = 'all'): Promise<McpConsoleEvent | null> {
    const qb = this.events.createQueryBuilder('e').where('e.id = :id', { id });
    this.scopeEvents(qb, scope);
    const row = await this.bounded(qb.getOne(), 'console event');
    return row ? toEventRow(row) : null;
  }

  /** A page of tasks (of the principals in `scope`), newest first: no arguments, no outcome. */
  async taskPage(
    before: McpConsoleCursor | null,
    scope: McpConsoleScope = 'all',
  ): Promise<McpConsolePage<McpConsoleTask>> {
    const qb = this.tasks
      .createQueryBuilder('t')
      .select([
        't.id',
        't.mount',
        't.toolName',
        't.status',
        't.principalKey',
        't.statusMessage',
        't.createdAt',
        't.updatedAt',
      ]);
    if (this.options.mount !== null) qb.andWhere('t.mount = :mount', { mount: this.options.mount });
    applyScope(qb, 't', scope);
    const page = await this.keysetPage(qb, 't', before);
    return {
      next: page.next,
      rows: page.rows.map((t) => ({
        id: t.id,
        mount: t.mount,
        toolName: t.toolName,
        status: t.status,
        principalKey: t.principalKey,
        statusMessage: t.statusMessage,
        createdAt: t.createdAt,
        updatedAt: t.updatedAt,
      })),
    };
  }

  /** Requests and failures per minute and their p50/p95 duration over the hour before `now` (of the principals in `scope`). */
  async throughput(now: number = Date.now(), scope: McpConsoleScope = 'all'): Promise<McpConsoleThroughput> {
    const minute = 60_000;
    const end = Math.floor(now / minute) * minute + minute;
    const start = end - CHART_MINUTES * minute;
    const qb = this.events
      .createQueryBuilder('e')
      .select(['e.id', 'e.createdAt', 'e.durationMs', 'e.errorCode', 'e.isError', 'e.status'])
      .where(`e.kind = 'request'`)
      .andWhere('e.createdAt >= :start', { start: new Date(start) });
    this.scopeEvents(qb, scope);
    const rows = await this.bounded(
      qb
        .orderBy('e.createdAt', 'DESC')
        .take(MAX_CHART_ROWS + 1)
        .getMany(),
      'console chart',
    );
    const truncated = rows.length > MAX_CHART_ROWS;
    return throughputOf(
      rows
        .slice(0, MAX_CHART_ROWS)
        .map((r) => ({ at: r.createdAt.getTime(), durationMs: r.durationMs, failed: isFailedEvent(r) })),
      start,
      CHART_MINUTES,
      truncated,
    );
  }

  /** A query bounded by `timeoutMs`; a database that is away or too slow rejects with `McpDatabaseUnavailableError`. */
  private bounded<T>(work: Promise<T>, operation: string): Promise<T> {
    return withDatabaseOutage(work, this.options.timeoutMs, operation);
  }

  /** With a `mount` option, only that mount's (inbound) rows; and only the rows of the scope's principals. */
  private scopeEvents(qb: SelectQueryBuilder<McpEvent>, scope: McpConsoleScope): void {
    if (this.options.mount !== null) qb.andWhere('e.mount = :mount', { mount: this.options.mount });
    applyScope(qb, 'e', scope);
  }

  /** `params.name` of the stored request, in the database's JSON dialect. */
  private toolNameSql(column: string): string {
    const type = String(this.events.manager.connection.options.type);
    if (['postgres', 'cockroachdb', 'aurora-postgres'].includes(type)) return `(${column} -> 'params' ->> 'name')`;
    if (
      ['sqlite', 'better-sqlite3', 'capacitor', 'cordova', 'expo', 'nativescript', 'react-native', 'sqljs'].includes(
        type,
      )
    )
      return `json_extract(${column}, '$.params.name')`;
    return `JSON_UNQUOTE(JSON_EXTRACT(${column}, '$.params.name'))`;
  }

  /** Newest first by (`createdAt`, `id`), after the cursor; one row more than a page tells whether there is a next one. */
  private async keysetPage<T extends { id: string; createdAt: Date }>(
    qb: SelectQueryBuilder<T>,
    alias: string,
    before: McpConsoleCursor | null,
  ): Promise<McpConsolePage<T>> {
    if (before) {
      qb.andWhere(`(${alias}.createdAt < :beforeAt OR (${alias}.createdAt = :beforeAt AND ${alias}.id < :beforeId))`, {
        beforeAt: before.at,
        beforeId: before.id,
      });
    }
    const size = this.options.pageSize;
    const rows = await this.bounded(
      qb
        .orderBy(`${alias}.createdAt`, 'DESC')
        .addOrderBy(`${alias}.id`, 'DESC')
        .take(size + 1)
        .getMany(),
      'console page',
    );
    const page = rows.slice(0, size);
    const last = page[page.length - 1];
    return { rows: page, next: rows.length > size && last ? { at: last.createdAt, id: last.id } : null };
  }
}

/** Narrows a query to the rows whose principal key is in the scope; an empty scope matches nothing. */
function applyScope<T extends object>(qb: SelectQueryBuilder<T>, alias: string, scope: McpConsoleScope): void {
  if (scope === 'all') return;
  if (scope.principalKeys.length === 0) qb.andWhere('1 = 0');
  else qb.andWhere(`${alias}.principalKey IN (:...scopeKeys)`, { scopeKeys: scope.principalKeys });
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function toEventRow(row: McpEvent): McpConsoleEvent {
  const request = row.request as { method?: unknown; params?: { name?: unknown } } | null;
  const tool =
    row.method === 'tools/call' && request && typeof request === 'object' ? stringOrNull(request.params?.name) : null;
  return { ...row, tool };
}
