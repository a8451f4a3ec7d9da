import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { Repository } from 'typeorm';
import { McpOutboundSession } from '../entities/outbound-session.entity';
import { DEFAULT_DATABASE_TIMEOUT_MS, withDatabaseDeadline } from '../database-deadline';
import type {
  McpOutboundSessionRecord,
  McpOutboundSessionState,
  McpOutboundSessionStore,
} from '../interfaces/mcp-outbound-session-store.interface';
import { storableOutboundState, storedPrincipalKey } from '../new-records';
import { escapedTableOf } from './entity-sql';

/** Most (server, scope key) rows kept in memory by one process; the oldest goes first. */
const MAX_CACHED_ROWS = 10_000;

/**
 * The client's remote sessions in `mcp_outbound_sessions`, keyed by (server, scope key), so a
 * call on any worker continues the session another worker opened. Every query is bounded by
 * the default database timeout, so a stalled database fails a call instead of hanging it.
 *
 * A row without a remote session id (a stdio server, whose every process opens its own session,
 * or a stateless verdict) holds nothing another worker could change under this one's feet but
 * the revision and capabilities the server announced: `find` keeps such rows in memory, until
 * this process saves or closes that session. Rows with a remote session id are read from the
 * database on every call, so any worker continues the session another one (re)opened.
 */
@Injectable()
export class TypeOrmOutboundSessionStore implements McpOutboundSessionStore {
  /** The table as the host's DataSource names it (its `schema` and `entityPrefix` included). */
  private readonly table: string;
  /** Rows without a remote session id, by `server\0scopeKey` (stored form). */
  private readonly cached = new Map<string, McpOutboundSessionRecord>();
  /** Counts this process's saves and closes: a lookup that raced one of them caches nothing. */
  private writes = 0;

  constructor(@InjectRepository(McpOutboundSession) private readonly sessions: Repository<McpOutboundSession>) {
    this.table = escapedTableOf(sessions.manager.connection, McpOutboundSession);
  }

  /** Runs SQL written with `:name` parameters on whichever database the host connected. */
  private async run<T>(sql: string, params: Record<string, unknown>): Promise<T> {
    const connection = this.sessions.manager.connection;
    const columns = connection.getMetadata(McpOutboundSession).columns;
    const prepared: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(params)) {
      const column = columns.find((c) => c.propertyName === name);
      prepared[name] = value === null || !column ? value : connection.driver.preparePersistentValue(value, column);
    }
    // TypeORM 0.3 requires a third argument (native parameters); 1.x takes two and ignores more.
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the driver as `this` just below
    const escape = connection.driver.escapeQueryWithParameters as (
      sql: string,
      parameters: object,
      nativeParameters: object,
    ) => [string, unknown[]];
    const [query, values] = escape.call(connection.driver, sql, prepared, {});
    return withDatabaseDeadline(
      this.sessions.query(query, values),
      DEFAULT_DATABASE_TIMEOUT_MS,
      'outbound session query',
    );
  }

  /** The open session of a server and scope, or null. */
  async find(server: string, scopeKey: string): Promise<McpOutboundSessionRecord | null> {
    scopeKey = storedPrincipalKey(scopeKey);
    const key = `${server}\0${scopeKey}`;
    const cached = this.cached.get(key);
    if (cached) return { ...cached };
    const writes = this.writes;
    const row = await withDatabaseDeadline(
      this.sessions
        .createQueryBuilder('s')
        .where('s.server = :server AND s.scope_key = :scopeKey AND s.closed_at IS NULL', { server, scopeKey })
        .getOne(),
      DEFAULT_DATABASE_TIMEOUT_MS,
      'outbound session lookup',
    );
    if (row && row.remoteSessionId === null && writes === this.writes) {
      if (this.cached.size >= MAX_CACHED_ROWS) this.cached.delete(this.cached.keys().next().value as string);
      this.cached.set(key, { ...row });
    }
    return row;
  }

  /**
   * The protocol revision last established with a server at an endpoint, by any scope key: the
   * era verdict another worker (or an earlier run) already reached. Null when none is known.
   */
  async findVersion(server: string, endpoint: string): Promise<McpOutboundSessionRecord | null> {
    return withDatabaseDeadline(
      this.sessions
        .createQueryBuilder('s')
        .where('s.server = :server AND s.endpoint = :endpoint AND s.closed_at IS NULL', { server, endpoint })
        .orderBy('s.updated_at', 'DESC')
        .getOne(),
      DEFAULT_DATABASE_TIMEOUT_MS,
      'outbound session lookup',
    );
  }

  /** Inserts or replaces the session of a server and scope (one atomic upsert); returns the row id. */
  async save(server: string, scopeKey: string, state: McpOutboundSessionState): Promise<string> {
    // A remote server's answers (session id, info, capabilities) are stored as storable values.
    state = storableOutboundState(state);
    scopeKey = storedPrincipalKey(scopeKey);
    this.forget(server, scopeKey);
    const now = new Date();
    const rows: { id: string }[] = await this.run(
      `INSERT INTO ${this.table} AS existing
         (id, server, scope_key, remote_session_id, protocol_version, server_info, server_capabilities, endpoint, created_at, updated_at, closed_at)
       VALUES (:id, :server, :scopeKey, :remoteSessionId, :protocolVersion, :serverInfo, :serverCapabilities, :endpoint, :createdAt, :updatedAt, NULL)
       ON CONFLICT (server, scope_key) DO UPDATE SET
         remote_session_id = EXCLUDED.remote_session_id,
         protocol_version = EXCLUDED.protocol_version,
         server_info = COALESCE(EXCLUDED.server_info, existing.server_info),
         server_capabilities = COALESCE(EXCLUDED.server_capabilities, existing.server_capabilities),
         endpoint = COALESCE(EXCLUDED.endpoint, existing.endpoint),
         created_at = CASE WHEN existing.closed_at IS NULL THEN existing.created_at ELSE EXCLUDED.created_at END,
         updated_at = EXCLUDED.updated_at,
         closed_at = NULL
       RETURNING id`,
      {
        id: randomUUID(),
        server,
        scopeKey,
        remoteSessionId: state.remoteSessionId,
        protocolVersion: state.protocolVersion,
        serverInfo: state.serverInfo,
        serverCapabilities: state.serverCapabilities,
        endpoint: state.endpoint ?? null,
        createdAt: now,
        updatedAt: now,
      },
    );
    return rows[0].id;
  }

  /** Marks the session of a server and scope closed (the row stays as an audit trail). */
  async close(server: string, scopeKey: string): Promise<void> {
    scopeKey = storedPrincipalKey(scopeKey);
    this.forget(server, scopeKey);
    const now = new Date();
    await this.run(
      `UPDATE ${this.table} SET closed_at = :closedAt, updated_at = :updatedAt WHERE server = :server AND scope_key = :scopeKey AND closed_at IS NULL`,
      {
        server,
        scopeKey,
        closedAt: now,
        updatedAt: now,
      },
    );
  }

  private forget(server: string, scopeKey: string): void {
    this.writes++;
    this.cached.delete(`${server}\0${scopeKey}`);
  }
}
