import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { MCP_COLUMN_LENGTHS } from '../mcp-columns.constants';

/**
 * The tokens a user granted the client for one server (`authorizationCode`): one row per server
 * name and scope key. The access and refresh tokens are sealed (AES-256-GCM, key id inside the
 * sealed text); `version` grows with every change, and `refreshingUntil` is the lease of the one
 * process refreshing the grant.
 */
@Entity({ name: 'mcp_oauth_grants' })
@Index('mcp_oauth_grants_server_scope_uq', ['server', 'scopeKey'], { unique: true })
export class McpOAuthGrant {
  /** Row id (UUID). */
  @PrimaryColumn({ type: 'varchar', length: MCP_COLUMN_LENGTHS.rowId })
  id: string;

  /** Name of the configured server. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.server })
  server: string;

  /** The user the grant belongs to (the call's scope key). */
  @Column({ name: 'scope_key', type: 'varchar', length: MCP_COLUMN_LENGTHS.principalKey })
  scopeKey: string;

  /** The authorization server that issued the tokens. */
  @Column({ type: 'varchar', length: 2048 })
  issuer: string;

  /** The client id the tokens were issued to. */
  @Column({ name: 'client_id', type: 'varchar', length: 2048 })
  clientId: string;

  /** The RFC 8707 resource the tokens are for. */
  @Column({ type: 'varchar', length: 2048 })
  resource: string;

  /** The scopes granted, space-separated. */
  @Column({ type: 'text' })
  scope: string;

  /** Scopes a 403 `insufficient_scope` asked for beyond the grant: the next authorization asks for them too. */
  @Column({ name: 'wanted_scope', type: 'text', nullable: true })
  wantedScope: string | null;

  /** The sealed access token. */
  @Column({ name: 'access_token', type: 'text' })
  accessToken: string;

  /** The sealed refresh token, when one was issued. */
  @Column({ name: 'refresh_token', type: 'text', nullable: true })
  refreshToken: string | null;

  /** When the access token expires. */
  @Column({ name: 'expires_at', type: Date })
  expiresAt: Date;

  /** Until when one process holds the right to refresh; null when none does. */
  @Column({ name: 'refreshing_until', type: Date, nullable: true })
  refreshingUntil: Date | null;

  /** Grows with every change of the row. */
  @Column({ type: 'integer' })
  version: number;

  /** When the user first authorized. */
  @Column({ name: 'created_at', type: Date })
  createdAt: Date;

  /** When the row last changed. */
  @Column({ name: 'updated_at', type: Date })
  updatedAt: Date;
}
