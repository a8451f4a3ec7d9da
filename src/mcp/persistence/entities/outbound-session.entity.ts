import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { McpOutboundSessionRecord } from '../interfaces/mcp-outbound-session-store.interface';
import { MCP_COLUMN_LENGTHS } from '../mcp-columns.constants';

/**
 * The client side of a remote session: which remote session id (and revision) a server name and
 * scope key (e.g. a principal) continue, so any worker can pick the session up.
 */
@Entity({ name: 'mcp_outbound_sessions' })
@Index('mcp_outbound_sessions_server_scope_uq', ['server', 'scopeKey'], { unique: true })
@Index('mcp_outbound_sessions_updated_at_idx', ['updatedAt'])
export class McpOutboundSession implements McpOutboundSessionRecord {
  /** Row id (UUID). */
  @PrimaryColumn({ type: 'varchar', length: MCP_COLUMN_LENGTHS.rowId })
  id: string;

  /** Name of the configured server. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.server })
  server: string;

  /** Who the session belongs to on our side (a principal key, or `''` for shared). */
  @Column({ name: 'scope_key', type: 'varchar', length: MCP_COLUMN_LENGTHS.principalKey })
  scopeKey: string;

  /** The remote `Mcp-Session-Id`, when the server issued one. */
  @Column({ name: 'remote_session_id', type: 'varchar', length: MCP_COLUMN_LENGTHS.remoteSessionId, nullable: true })
  remoteSessionId: string | null;

  /** The negotiated protocol revision. */
  @Column({ name: 'protocol_version', type: 'varchar', length: MCP_COLUMN_LENGTHS.protocolVersion })
  protocolVersion: string;

  /** The server's `serverInfo`. */
  @Column({ name: 'server_info', type: 'jsonb', nullable: true })
  serverInfo: Record<string, unknown> | null;

  /** The server's capabilities. */
  @Column({ name: 'server_capabilities', type: 'jsonb', nullable: true })
  serverCapabilities: Record<string, unknown> | null;

  /**
   * The endpoint (HTTP URL, or stdio argv and cwd) the row was established with: its
   * `protocolVersion` is the era verdict of that endpoint, reused while the configuration still
   * points there. Null on rows written before verdicts were kept.
   */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.endpoint, nullable: true })
  endpoint?: string | null;

  /** When the session was established. */
  @Column({ name: 'created_at', type: Date })
  createdAt: Date;

  /** When the row last changed. */
  @Column({ name: 'updated_at', type: Date })
  updatedAt: Date;

  /** When the session was closed; null while open. */
  @Column({ name: 'closed_at', type: Date, nullable: true })
  closedAt: Date | null;
}
