import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { MCP_COLUMN_LENGTHS } from '../mcp-columns.constants';
import type { McpTaskPayload } from '../interfaces/mcp-task-store.interface';

/**
 * One task-augmented `tools/call` (experimental tasks of 2025-11-25): who owns it, what to run,
 * where it stands and, once over, its answer. Any replica creates it, any worker runs it.
 */
@Entity({ name: 'mcp_tasks' })
@Index('mcp_tasks_owner_created_idx', ['mount', 'principalKey', 'createdAt'])
@Index('mcp_tasks_expires_at_idx', ['expiresAt'])
export class McpTask {
  /** The task id (crypto-random). */
  @PrimaryColumn({ type: 'varchar', length: MCP_COLUMN_LENGTHS.taskId })
  id: string;

  /** The mount serving the tool. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.mount })
  mount: string;

  /** The owning principal (stored form). */
  @Column({ name: 'principal_key', type: 'varchar', length: MCP_COLUMN_LENGTHS.principalKey })
  principalKey: string;

  /** The 2025 session that created the task. */
  @Column({ name: 'session_id', type: 'varchar', length: MCP_COLUMN_LENGTHS.sessionId, nullable: true })
  sessionId: string | null;

  /** The tool called. */
  @Column({ name: 'tool_name', type: 'varchar', length: MCP_COLUMN_LENGTHS.toolName })
  toolName: string;

  /** SHA-256 (hex) of the arguments as canonical JSON. */
  @Column({ name: 'arguments_digest', type: 'varchar', length: MCP_COLUMN_LENGTHS.digest })
  argumentsDigest: string;

  /** Arguments, `_meta`, principal and revision: what a worker needs to run the call. */
  @Column({ type: 'jsonb' })
  payload: McpTaskPayload;

  /** `working`, `input_required`, `completed`, `failed` or `cancelled`. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.taskStatus })
  status: string;

  /** The latest status message. */
  @Column({ name: 'status_message', type: 'text', nullable: true })
  statusMessage: string | null;

  /** `{ result }` or `{ error }` once the task is over. */
  @Column({ type: 'jsonb', nullable: true })
  outcome: Record<string, unknown> | null;

  /** Lifetime from creation in milliseconds; null for unlimited. */
  @Column({
    name: 'ttl_ms',
    type: 'bigint',
    nullable: true,
    transformer: { to: (v: number | null) => v, from: (v: string | number | null) => (v === null ? null : Number(v)) },
  })
  ttlMs: number | null;

  /** Suggested polling interval in milliseconds. */
  @Column({ name: 'poll_interval_ms', type: 'integer' })
  pollIntervalMs: number;

  /** When the task was created. */
  @Column({ name: 'created_at', type: Date })
  createdAt: Date;

  /** When the task last changed. */
  @Column({ name: 'updated_at', type: Date })
  updatedAt: Date;

  /** When the task stops being served; null for never. */
  @Column({ name: 'expires_at', type: Date, nullable: true })
  expiresAt: Date | null;

  /** When a worker last claimed the task. */
  @Column({ name: 'started_at', type: Date, nullable: true })
  startedAt: Date | null;

  /** The worker holding the task. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.worker, nullable: true })
  worker: string | null;

  /** How many times a worker claimed the task. */
  @Column({ type: 'integer', default: 0 })
  attempt: number;
}
