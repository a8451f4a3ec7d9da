import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One object of the built-in authorization server (`McpAuthorizationServerModule`), as its
 * `oidc-provider` adapter stores it: a client, grant, session, interaction, authorization code,
 * access or refresh token, registration token, signing key set or upstream sign-in. Every replica
 * reads the same rows, so a flow may start on one replica and end on another.
 */
@Entity({ name: 'mcp_oauth_provider_records' })
@Index('idx_mcp_oauth_provider_records_grant', ['grantId'])
@Index('idx_mcp_oauth_provider_records_uid', ['uid'])
@Index('idx_mcp_oauth_provider_records_expires', ['expiresAt'])
export class McpOAuthProviderRecord {
  /** The kind of object (`Client`, `Grant`, `Session`, `AccessToken`...). */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  model: string;

  /** Its id within the kind. */
  @PrimaryColumn({ type: 'varchar', length: 2048 })
  id: string;

  /** The object as JSON text. */
  @Column({ type: 'text' })
  payload: string;

  /** The grant it belongs to, for `revokeByGrantId`. */
  @Column({ name: 'grant_id', type: 'varchar', length: 255, nullable: true })
  grantId: string | null;

  /** The user code of a device flow. */
  @Column({ name: 'user_code', type: 'varchar', length: 255, nullable: true })
  userCode: string | null;

  /** The uid of a session or interaction. */
  @Column({ type: 'varchar', length: 255, nullable: true })
  uid: string | null;

  /** When it expires; null when it does not. */
  @Column({ name: 'expires_at', type: Date, nullable: true })
  expiresAt: Date | null;

  /** When a one-time object (an authorization code, a rotated refresh token) was used. */
  @Column({ name: 'consumed_at', type: Date, nullable: true })
  consumedAt: Date | null;
}
