import type { McpOAuthGrant } from '../../../persistence/entities/oauth-grant.entity';
import { storedPrincipalKey } from '../../../persistence/new-records';
import { cacheTtlMs } from '../client-credentials.auth';
import type { IssuedTokens } from './token-endpoint-request';
import { McpTokenCipher, type McpCipherOwner, type McpOAuthEncryptionKey } from '../../../token-cipher';

/** The client's keys, as its boot messages name them. */
const CLIENT_KEYS: McpCipherOwner = {
  option: 'McpClientModule option "oauth.encryptionKeys"',
  missing:
    'McpClientModule: a server uses authorizationCode(), which keeps user tokens encrypted in the database: set "oauth.encryptionKeys" to [{ id, key }] with a key of 32 random bytes (`openssl rand -base64 32`)',
};

/**
 * Seals what `authorizationCode` keeps in the database: each value is bound to its row and
 * column (server, stored scope key, `access` / `refresh`; the state hash for a PKCE verifier).
 */
export class McpGrantSealer {
  private readonly cipher: McpTokenCipher;

  constructor(keys: readonly McpOAuthEncryptionKey[] | undefined) {
    this.cipher = new McpTokenCipher(keys, CLIENT_KEYS);
  }

  private static context(server: string, scopeKey: string, column: 'access' | 'refresh'): string {
    return `grant\0${server}\0${storedPrincipalKey(scopeKey)}\0${column}`;
  }

  /** Issued tokens as the grant row keeps them; without a new refresh token the previous (sealed) one stays. */
  sealTokens(
    server: string,
    scopeKey: string,
    tokens: IssuedTokens,
    previousRefresh: string | null,
  ): { accessToken: string; refreshToken: string | null; expiresAt: Date } {
    return {
      accessToken: this.cipher.seal(tokens.accessToken, McpGrantSealer.context(server, scopeKey, 'access')),
      refreshToken:
        tokens.refreshToken !== null
          ? this.cipher.seal(tokens.refreshToken, McpGrantSealer.context(server, scopeKey, 'refresh'))
          : previousRefresh,
      // Used until shortly before it expires (as clientCredentials' tokens are).
      expiresAt: new Date(Date.now() + cacheTtlMs(tokens.expiresInSec)),
    };
  }

  /** A token of a grant row in clear, or null when absent or not opening with the configured keys. */
  open(grant: McpOAuthGrant, column: 'access' | 'refresh'): string | null {
    const sealed = column === 'access' ? grant.accessToken : grant.refreshToken;
    return sealed === null
      ? null
      : this.cipher.open(sealed, McpGrantSealer.context(grant.server, grant.scopeKey, column));
  }

  /** A PKCE verifier sealed for the pending authorization of `stateHash`. */
  sealVerifier(stateHash: string, verifier: string): string {
    return this.cipher.seal(verifier, `authorization\0${stateHash}`);
  }

  /** The PKCE verifier of a pending authorization, or null. */
  openVerifier(stateHash: string, sealed: string): string | null {
    return this.cipher.open(sealed, `authorization\0${stateHash}`);
  }

  /** The client secret of a dynamically registered client, sealed for its registration row. */
  sealClientSecret(registrationKey: string, secret: string): string {
    return this.cipher.seal(secret, `client\0${registrationKey}`);
  }

  /** The client secret of a registration row in clear, or null when it does not open with the configured keys. */
  openClientSecret(registrationKey: string, sealed: string): string | null {
    return this.cipher.open(sealed, `client\0${registrationKey}`);
  }
}
