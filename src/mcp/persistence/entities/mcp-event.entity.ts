import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { McpEventDirection, McpEventRecord } from '../interfaces/mcp-event-sink.interface';
import { MCP_COLUMN_LENGTHS } from '../mcp-columns.constants';

export type { McpEventDirection };

/**
 * The wire log: one row per exchange that reached a session (inbound) or a remote server
 * (outbound), failed ones included. Never holds a bearer token.
 */
@Entity({ name: 'mcp_events' })
@Index('mcp_events_session_ref_idx', ['sessionRef'])
@Index('mcp_events_created_at_idx', ['createdAt'])
@Index('mcp_events_principal_created_at_idx', ['principalKey', 'createdAt'])
export class McpEvent implements McpEventRecord {
  /** Row id (UUID). */
  @PrimaryColumn({ type: 'varchar', length: MCP_COLUMN_LENGTHS.rowId })
  id: string;

  /** When the exchange started. */
  @Column({ name: 'created_at', type: Date })
  createdAt: Date;

  /** `inbound` (a client called us) or `outbound` (we called a server). */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.eventDirection })
  direction: McpEventDirection;

  /** The mount that served an inbound exchange. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.mount, nullable: true })
  mount: string | null;

  /** The remote server of an outbound exchange. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.server, nullable: true })
  server: string | null;

  /** Id of the `mcp_inbound_sessions` (or outbound session) row, when there is one. */
  @Column({ name: 'session_ref', type: 'varchar', length: MCP_COLUMN_LENGTHS.rowId, nullable: true })
  sessionRef: string | null;

  /** Key of the principal behind the exchange. */
  @Column({ name: 'principal_key', type: 'varchar', length: MCP_COLUMN_LENGTHS.principalKey, nullable: true })
  principalKey: string | null;

  /** `request`, `notification`, `response` (a client's answer) or `terminate` (DELETE). */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.eventKind })
  kind: string;

  /** The JSON-RPC method, when the message had one. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.method, nullable: true })
  method: string | null;

  /** The protocol revision the exchange spoke. */
  @Column({ name: 'protocol_version', type: 'varchar', length: MCP_COLUMN_LENGTHS.protocolVersion, nullable: true })
  protocolVersion: string | null;

  /** The JSON-RPC message received (inbound) or sent (outbound). */
  @Column({ type: 'jsonb', nullable: true })
  request: unknown;

  /** The JSON-RPC response, when there was one. */
  @Column({ type: 'jsonb', nullable: true })
  response: unknown;

  /** HTTP status (inbound, or outbound over HTTP). */
  @Column({ type: 'integer', nullable: true })
  status: number | null;

  /** JSON-RPC error code of the response, when it was an error. */
  @Column({ name: 'error_code', type: 'integer', nullable: true })
  errorCode: number | null;

  /** True when a `tools/call` result had `isError: true`. */
  @Column({ name: 'is_error', type: 'boolean', default: false })
  isError: boolean;

  /** How long the exchange took, in milliseconds. */
  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs: number;

  /** Wire notes: stderr excerpts, transport errors. */
  @Column({ type: 'text', nullable: true })
  note: string | null;

  /** The OpenTelemetry trace id of the exchange (32 hex characters), when its span context was valid. */
  @Column({ name: 'trace_id', type: 'varchar', length: MCP_COLUMN_LENGTHS.traceId, nullable: true })
  traceId: string | null;
}
