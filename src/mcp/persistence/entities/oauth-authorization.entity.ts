import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { MCP_COLUMN_LENGTHS } from '../mcp-columns.constants';

/**
 * An authorization the client started and the user has not completed yet (`authorizationCode`):
 * what the callback needs to finish it on any replica. Keyed by the SHA-256 of its `state`; the
 * PKCE verifier is sealed; used once, and refused after `expiresAt`.
 */
@Entity({ name: 'mcp_oauth_authorizations' })
@Index('mcp_oauth_authorizations_expires_at_idx', ['expiresAt'])
export class McpOAuthAuthorization {
  /** SHA-256 of the `state` parameter, hex. */
  @PrimaryColumn({ name: 'state_hash', type: 'varchar', length: 64 })
  stateHash: string;

  /** Name of the configured server. */
  @Column({ type: 'varchar', length: MCP_COLUMN_LENGTHS.server })
  server: string;

  /** The user the grant will belong to. */
  @Column({ name: 'scope_key', type: 'varchar', length: MCP_COLUMN_LENGTHS.principalKey })
  scopeKey: string;

  /** The authorization server asked. */
  @Column({ type: 'varchar', length: 2048 })
  issuer: string;

  /** The client id used. */
  @Column({ name: 'client_id', type: 'varchar', length: 2048 })
  clientId: string;

  /** The RFC 8707 resource asked for. */
  @Column({ type: 'varchar', length: 2048 })
  resource: string;

  /** The scopes asked for, space-separated (empty when none). */
  @Column({ type: 'text' })
  scope: string;

  /** The redirect URI sent (the token request repeats it). */
  @Column({ name: 'redirect_uri', type: 'varchar', length: 2048 })
  redirectUri: string;

  /** The sealed PKCE code verifier. */
  @Column({ name: 'code_verifier', type: 'text' })
  codeVerifier: string;

  /** Where the callback sends the user once done, as the app asked. */
  @Column({ name: 'redirect_after', type: 'varchar', length: 2048, nullable: true })
  redirectAfter: string | null;

  /** When the authorization was started. */
  @Column({ name: 'created_at', type: Date })
  createdAt: Date;

  /** After this the callback refuses it. */
  @Column({ name: 'expires_at', type: Date })
  expiresAt: Date;
}
