import { createHash, randomBytes } from 'node:crypto';

/** A fresh PKCE pair (RFC 7636, S256) and `state`, each 32 random bytes, base64url. */
export function newAuthorizationSecrets(): { state: string; verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return {
    state: randomBytes(32).toString('base64url'),
    verifier,
    challenge: createHash('sha256').update(verifier).digest('base64url'),
  };
}

/** The key a pending authorization is stored under: the hash of its state, so the table never holds a usable state. */
export function stateHash(state: string): string {
  return createHash('sha256').update(state).digest('hex');
}
