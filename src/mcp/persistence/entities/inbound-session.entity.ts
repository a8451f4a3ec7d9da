import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { McpLogLevel } from '../../protocol/log-levels';
import type { McpInboundSessionRecord } from '../interfaces/mcp-session-store.interface';
import { MCP_COLUMN_LENGTHS } from '../mcp-columns.constants';

/**
 * One MCP session served by this app (2025-era revisions). Rows are never deleted by a client:
 * DELETE sets `terminatedAt`, so the table doubles as an audit trail of who connected when.
 */
@Entity({ name: 'mcp_inbound_sessions' })
@Index('mcp_inbound_sessions_session_id_uq', ['sessionId'], { unique: true })
@Index('mcp_inbound_sessions_mount_principal_idx', ['mount', 'principalKey'])
@Index('mcp_inbound_sessions_terminated_at_idx', ['terminatedAt'])
@Index('mcp_inbound_sessions_last_seen_at_idx', ['lastSeenAt'])
export class McpInboundSession implements McpInboundSessionRecord {
  /** Row id (UUID). */
  @PrimaryColumn({ type: 'varchar', length: MCP_COLUMN_LENGTHS.rowId })
  id: string;

  /** The mount that created the session. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.mount })
  mount: string;

  /** The `Mcp-Session-Id` sent to the client: crypto-random, visible ASCII. */
  @Column({ name: 'session_id', type: 'varchar', length: MCP_COLUMN_LENGTHS.sessionId })
  sessionId: string;

  /** Key of the principal the session is bound to. */
  @Column({ name: 'principal_key', type: 'varchar', length: MCP_COLUMN_LENGTHS.principalKey })
  principalKey: string;

  /** Human-readable label of that principal. */
  @Column({ name: 'principal_label', type: 'varchar', length: MCP_COLUMN_LENGTHS.principalLabel })
  principalLabel: string;

  /** The negotiated protocol revision. */
  @Column({ name: 'protocol_version', type: 'varchar', length: MCP_COLUMN_LENGTHS.protocolVersion })
  protocolVersion: string;

  /** `clientInfo` from initialize. */
  @Column({ name: 'client_info', type: 'jsonb', nullable: true })
  clientInfo: Record<string, unknown> | null;

  /** `capabilities` from initialize. */
  @Column({ name: 'client_capabilities', type: 'jsonb', nullable: true })
  clientCapabilities: Record<string, unknown> | null;

  /** Least severe level of `notifications/message` the client asked for (`logging/setLevel`); null: none. */
  @Column({ name: 'log_level', type: 'varchar', length: MCP_COLUMN_LENGTHS.logLevel, nullable: true })
  logLevel: McpLogLevel | null;

  /** When initialize created the session. */
  @Column({ name: 'created_at', type: Date })
  createdAt: Date;

  /** Last time a request used the session (refreshed at most once a second). */
  @Column({ name: 'last_seen_at', type: Date })
  lastSeenAt: Date;

  /** When the client (or expiry) ended the session; null while it is open. */
  @Column({ name: 'terminated_at', type: Date, nullable: true })
  terminatedAt: Date | null;
}
