import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { Repository } from 'typeorm';
import { McpOutboundSession } from './entities/outbound-session.entity';

/** What a handshake (or a continued exchange) tells about a remote session. */
export interface McpOutboundSessionState {
  remoteSessionId: string | null;
  protocolVersion: string;
  serverInfo: Record<string, unknown> | null;
  serverCapabilities: Record<string, unknown> | null;
}

/**
 * The client's remote sessions in `mcp_outbound_sessions`, keyed by (server, scope key), so a
 * call on any worker continues the session another worker opened.
 */
@Injectable()
export class McpOutboundSessionStore {
  constructor(@InjectRepository(McpOutboundSession) private readonly sessions: Repository<McpOutboundSession>) {}

  /** The open session of a server and scope, or null. */
  find(server: string, scopeKey: string): Promise<McpOutboundSession | null> {
    return this.sessions
      .createQueryBuilder('s')
      .where('s.server = :server AND s.scope_key = :scopeKey AND s.closed_at IS NULL', { server, scopeKey })
      .getOne();
  }

  /** Inserts or replaces the session of a server and scope (one atomic upsert); returns the row id. */
  async save(server: string, scopeKey: string, state: McpOutboundSessionState): Promise<string> {
    const now = new Date();
    const rows: { id: string }[] = await this.sessions.query(
      `INSERT INTO mcp_outbound_sessions
         (id, server, scope_key, remote_session_id, protocol_version, server_info, server_capabilities, created_at, updated_at, closed_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, NULL)
       ON CONFLICT (server, scope_key) DO UPDATE SET
         remote_session_id = EXCLUDED.remote_session_id,
         protocol_version = EXCLUDED.protocol_version,
         server_info = COALESCE(EXCLUDED.server_info, mcp_outbound_sessions.server_info),
         server_capabilities = COALESCE(EXCLUDED.server_capabilities, mcp_outbound_sessions.server_capabilities),
         created_at = CASE WHEN mcp_outbound_sessions.closed_at IS NULL THEN mcp_outbound_sessions.created_at ELSE EXCLUDED.created_at END,
         updated_at = EXCLUDED.updated_at,
         closed_at = NULL
       RETURNING id`,
      [
        randomUUID(),
        server,
        scopeKey,
        state.remoteSessionId,
        state.protocolVersion,
        state.serverInfo === null ? null : JSON.stringify(state.serverInfo),
        state.serverCapabilities === null ? null : JSON.stringify(state.serverCapabilities),
        now,
      ],
    );
    return rows[0].id;
  }

  /** Marks the session of a server and scope closed (the row stays as an audit trail). */
  async close(server: string, scopeKey: string): Promise<void> {
    await this.sessions.query(`UPDATE mcp_outbound_sessions SET closed_at = $3, updated_at = $3 WHERE server = $1 AND scope_key = $2 AND closed_at IS NULL`, [
      server,
      scopeKey,
      new Date(),
    ]);
  }
}
