import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { McpSubscriptionRecord } from '../interfaces/mcp-subscription-store.interface';
import { MCP_COLUMN_LENGTHS } from '../mcp-columns.constants';

/**
 * One `resources/subscribe` of a 2025-era session: which session wants
 * `notifications/resources/updated` for which URI. Kept in the database so the replica that
 * learns about a change finds every subscriber, whichever replica took the subscription.
 */
@Entity({ name: 'mcp_resource_subscriptions' })
@Index('mcp_resource_subscriptions_session_uri_uq', ['sessionId', 'uri'], { unique: true })
@Index('mcp_resource_subscriptions_mount_uri_idx', ['mount', 'uri'])
export class McpResourceSubscription implements McpSubscriptionRecord {
  /** Row id (UUID). */
  @PrimaryColumn({ type: 'varchar', length: MCP_COLUMN_LENGTHS.rowId })
  id: string;

  /** The mount serving the session. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.mount })
  mount: string;

  /** The subscribing session's `Mcp-Session-Id`. */
  @Column({ name: 'session_id', type: 'varchar', length: MCP_COLUMN_LENGTHS.sessionId })
  sessionId: string;

  /** The resource URI the session watches. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.subscriptionUri })
  uri: string;

  /** When the session subscribed. */
  @Column({ name: 'created_at', type: Date })
  createdAt: Date;
}
