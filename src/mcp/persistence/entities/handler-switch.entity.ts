import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { MCP_COLUMN_LENGTHS } from '../mcp-columns.constants';

/**
 * One switch of `McpRegistry`: a handler of a mount turned off for everyone or for one principal.
 * Kept in the database so every replica, and one that boots later, reads the same switches.
 * `principal_key` is `''` for everyone (a unique key treats NULLs as distinct on PostgreSQL and
 * SQLite, so an empty string keeps "off for everyone" to one row).
 */
@Entity({ name: 'mcp_handler_switches' })
@Index('mcp_handler_switches_handler_principal_uq', ['mount', 'kind', 'name', 'principalKey'], { unique: true })
export class McpHandlerSwitch {
  /** Row id (UUID). */
  @PrimaryColumn({ type: 'varchar', length: MCP_COLUMN_LENGTHS.rowId })
  id: string;

  /** The mount serving the handler. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.mount })
  mount: string;

  /** `tool`, `prompt`, `resource` or `resourceTemplate`. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.handlerKind })
  kind: string;

  /** The tool or prompt name, the resource URI or the template string (stored form). */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.handlerName })
  name: string;

  /** The principal the handler is off for (stored form), or `''` when it is off for everyone. */
  @Column({ name: 'principal_key', type: 'varchar', length: MCP_COLUMN_LENGTHS.principalKey })
  principalKey: string;

  /** When the switch was made. */
  @Column({ name: 'created_at', type: Date })
  createdAt: Date;
}
