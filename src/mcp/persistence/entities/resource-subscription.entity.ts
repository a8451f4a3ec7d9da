import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One `resources/subscribe` of a 2025-era session: which session wants
 * `notifications/resources/updated` for which URI. Kept in the database so the replica that
 * learns about a change finds every subscriber, whichever replica took the subscription.
 */
@Entity({ name: 'mcp_resource_subscriptions' })
@Index('mcp_resource_subscriptions_session_uri_uq', ['sessionId', 'uri'], { unique: true })
@Index('mcp_resource_subscriptions_mount_uri_idx', ['mount', 'uri'])
export class McpResourceSubscription {
  /** Row id (UUID). */
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  /** The mount serving the session. */
  @Column({ type: 'varchar', length: 128 })
  mount: string;

  /** The subscribing session's `Mcp-Session-Id`. */
  @Column({ name: 'session_id', type: 'varchar', length: 128 })
  sessionId: string;

  /** The resource URI the session watches. */
  @Column({ type: 'varchar', length: 2048 })
  uri: string;

  /** When the session subscribed. */
  @Column({ name: 'created_at', type: Date })
  createdAt: Date;
}
