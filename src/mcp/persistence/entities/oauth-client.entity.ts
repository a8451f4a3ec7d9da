import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A client the app registered at an authorization server (RFC 7591 dynamic registration, for
 * `authorizationCode({ registration })`): one row per issuer and redirect URI, shared by every
 * replica so that all of them use one registration. A client secret, when the server issued
 * one, is sealed (AES-256-GCM) like the grants' tokens.
 */
@Entity({ name: 'mcp_oauth_clients' })
export class McpOAuthClient {
  /** SHA-256 (hex) of the issuer and the redirect URI the client was registered with. */
  @PrimaryColumn({ name: 'registration_key', type: 'varchar', length: 64 })
  registrationKey: string;

  /** The authorization server the client is registered at. */
  @Column({ type: 'varchar', length: 2048 })
  issuer: string;

  /** The redirect URI it was registered with (`oauth.redirectUri`). */
  @Column({ name: 'redirect_uri', type: 'varchar', length: 2048 })
  redirectUri: string;

  /** The client id the authorization server issued. */
  @Column({ name: 'client_id', type: 'varchar', length: 2048 })
  clientId: string;

  /** The sealed client secret, when one was issued. */
  @Column({ name: 'client_secret', type: 'text', nullable: true })
  clientSecret: string | null;

  /** When the client secret expires (`client_secret_expires_at`); null when it does not, or there is none. */
  @Column({ name: 'secret_expires_at', type: Date, nullable: true })
  secretExpiresAt: Date | null;

  /** When the client was registered. */
  @Column({ name: 'created_at', type: Date })
  createdAt: Date;
}
