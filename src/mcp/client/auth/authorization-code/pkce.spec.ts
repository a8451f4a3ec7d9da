import { createHash } from 'node:crypto';
import { newAuthorizationSecrets, stateHash } from './pkce';

describe('authorization secrets', () => {
  it('makes an S256 challenge of a fresh verifier, and a fresh state each time', () => {
    const a = newAuthorizationSecrets();
    const b = newAuthorizationSecrets();
    expect(a.challenge).toBe(createHash('sha256').update(a.verifier).digest('base64url'));
    expect(a.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.state).not.toBe(b.state);
    expect(stateHash(a.state)).toMatch(/^[0-9a-f]{64}$/);
  });
});
