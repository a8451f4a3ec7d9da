import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Between, In, IsNull, MoreThanOrEqual, type Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import type { McpLogLevel } from '../../protocol/log-levels';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { McpInboundSession } from '../entities/inbound-session.entity';
import type {
  McpInboundSessionRecord,
  McpNewInboundSession,
  McpSessionStore,
} from '../interfaces/mcp-session-store.interface';
import type { McpStoreSettings } from '../interfaces/mcp-store-settings.interface';
import { InjectMcpStoreSettings } from '../mcp-persistence.constants';
import { isSessionIdle, sessionIdleCutoff, sessionTouchIntervalMs } from '../session-liveness';
import { newInboundSessionRecord, storedPrincipalKey } from '../new-records';
import { EntitySql } from './entity-sql';
import { GroupCommitter } from '../group-committer';
import { DEFAULT_DATABASE_TIMEOUT_MS, withDatabaseDeadline } from '../database-deadline';

/**
 * Sessions of one mount, in the database only, so any replica serves any session. Lookups are
 * batched: concurrent requests share one SELECT. A session is found only by its mount, id and
 * principal together; anything else (unknown, terminated, idle, other mount, other principal)
 * is the same "not found".
 */
@Injectable()
export class TypeOrmSessionStore implements McpSessionStore {
  private readonly lookups: GroupCommitter<string, McpInboundSession | null>;
  private readonly sql: EntitySql<McpInboundSession>;
  private readonly timeoutMs: number;
  /** `last_seen_at` is refreshed at most this often per session, to spare the database. */
  private readonly touchIntervalMs: number;

  constructor(
    @InjectRepository(McpInboundSession) private readonly sessions: Repository<McpInboundSession>,
    @InjectMcpStoreSettings() private readonly settings: McpStoreSettings,
  ) {
    this.sql = new EntitySql(sessions.manager.connection, McpInboundSession);
    this.timeoutMs = settings.databaseTimeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS;
    this.touchIntervalMs = sessionTouchIntervalMs(settings.idleTtlMs);
    this.lookups = new GroupCommitter((ids) => this.bounded(this.load(ids), 'session lookup'));
  }

  /** Every operation is bounded, so a stalled database costs a request `timeoutMs`, not forever. */
  private bounded<T>(work: Promise<T>, operation: string): Promise<T> {
    return withDatabaseDeadline(work, this.timeoutMs, operation);
  }

  /** Opens a session bound to the mount and the principal; returns the new row. */
  async open(input: McpNewInboundSession): Promise<McpInboundSessionRecord> {
    const row = newInboundSessionRecord(this.settings.mount, input);
    await this.bounded(this.sessions.insert(row as QueryDeepPartialEntity<McpInboundSession>), 'session insert');
    return row;
  }

  /** The live session with this id on this mount for this principal, or null. */
  async find(sessionId: string, principal: McpPrincipal): Promise<McpInboundSessionRecord | null> {
    const row = await this.bounded(this.lookups.submit(sessionId), 'session lookup');
    if (
      !row ||
      row.mount !== this.settings.mount ||
      row.principalKey !== storedPrincipalKey(principal.key) ||
      row.terminatedAt
    ) {
      return null;
    }
    if (isSessionIdle(row.lastSeenAt, this.settings.idleTtlMs)) {
      await this.bounded(
        this.sessions.update({ id: row.id, terminatedAt: IsNull() }, { terminatedAt: new Date() }),
        'session update',
      );
      return null;
    }
    return row;
  }

  /**
   * Stores the least severe log level the client wants on a session (`logging/setLevel`); every
   * replica reads it with the session on the next request.
   */
  async setLogLevel(sessionId: string, principal: McpPrincipal, level: McpLogLevel): Promise<void> {
    await this.bounded(
      this.sessions.update(
        { sessionId, mount: this.settings.mount, principalKey: storedPrincipalKey(principal.key) },
        { logLevel: level },
      ),
      'session update',
    );
  }

  /** Ends a session: sets `terminated_at`, keeps the row. */
  async terminate(session: McpInboundSessionRecord): Promise<void> {
    await this.bounded(this.sessions.update({ id: session.id }, { terminatedAt: new Date() }), 'session update');
  }

  /** Live sessions of the principal on this mount (one indexed count on (mount, principal_key)). */
  countOpen(principal: McpPrincipal): Promise<number> {
    return this.bounded(
      this.sessions.count({
        where: {
          mount: this.settings.mount,
          principalKey: storedPrincipalKey(principal.key),
          terminatedAt: IsNull(),
          lastSeenAt: MoreThanOrEqual(sessionIdleCutoff(this.settings.idleTtlMs)),
        },
      }),
      'session count',
    );
  }

  /**
   * Refreshes `last_seen_at` of many sessions in one UPDATE. Rows refreshed less than a touch
   * interval ago (by another replica), terminated rows and idle rows are left alone, so touches
   * never move the time backwards nor revive an expired session.
   */
  async touch(sessions: McpInboundSessionRecord[], seenAt: Date): Promise<void> {
    if (!sessions.length) return;
    const ids = [...new Set(sessions.map((session) => session.id))];
    const idleCutoff = sessionIdleCutoff(this.settings.idleTtlMs, seenAt.getTime());
    const freshCutoff = new Date(seenAt.getTime() - this.touchIntervalMs);
    await this.bounded(
      this.sessions.update(
        {
          id: In(ids),
          mount: this.settings.mount,
          terminatedAt: IsNull(),
          lastSeenAt: Between(idleCutoff, freshCutoff),
        },
        { lastSeenAt: seenAt },
      ),
      'session touch',
    );
  }

  private async load(sessionIds: string[]): Promise<(McpInboundSession | null)[]> {
    const unique = [...new Set(sessionIds)];
    const rows = await this.sql.findIn('sessionId', unique);
    const byId = new Map(rows.map((row) => [row.sessionId, row]));
    const now = Date.now();
    const stale = rows.filter(
      (row) =>
        !row.terminatedAt &&
        now - row.lastSeenAt.getTime() > this.touchIntervalMs &&
        !isSessionIdle(row.lastSeenAt, this.settings.idleTtlMs, now),
    );
    if (stale.length) {
      const touchedAt = new Date(now);
      await this.sessions.update({ id: In(stale.map((row) => row.id)) }, { lastSeenAt: touchedAt });
      stale.forEach((row) => (row.lastSeenAt = touchedAt));
    }
    return sessionIds.map((id) => byId.get(id) ?? null);
  }
}
