import { randomBytes } from 'node:crypto';
import { McpConfigurationError } from './errors/mcp-configuration.errors';
import { McpTokenCipher as Cipher, type McpCipherOwner, type McpOAuthEncryptionKey } from './token-cipher';

const OWNER: McpCipherOwner = {
  option: 'McpClientModule option "oauth.encryptionKeys"',
  missing: 'McpClientModule: set "oauth.encryptionKeys" to [{ id, key }] (`openssl rand -base64 32`)',
};

/** The cipher as the client configures it. */
class McpTokenCipher extends Cipher {
  constructor(keys: readonly McpOAuthEncryptionKey[] | undefined) {
    super(keys, OWNER);
  }
}

const key = (id: string) => ({ id, key: randomBytes(32).toString('base64') });

describe('McpTokenCipher', () => {
  it('opens what it sealed, bound to its context, and never holds the plain text', () => {
    const cipher = new McpTokenCipher([key('k1')]);
    const sealed = cipher.seal('secret-token', 'row-a');
    expect(sealed).toMatch(/^v1:k1:/);
    expect(sealed).not.toContain('secret-token');
    expect(cipher.open(sealed, 'row-a')).toBe('secret-token');
    expect(cipher.open(sealed, 'row-b')).toBeNull();
  });

  it('opens values of an older key after rotation, and seals with the first', () => {
    const old = key('old');
    const sealed = new McpTokenCipher([old]).seal('t', 'c');
    const rotated = new McpTokenCipher([key('new'), old]);
    expect(rotated.open(sealed, 'c')).toBe('t');
    expect(rotated.seal('t', 'c')).toMatch(/^v1:new:/);
    expect(new McpTokenCipher([key('new')]).open(sealed, 'c')).toBeNull();
  });

  it('refuses altered or malformed values', () => {
    const cipher = new McpTokenCipher([{ id: 'hex', key: randomBytes(32).toString('hex') }]);
    const sealed = cipher.seal('t', 'c');
    const parts = sealed.split(':');
    // One bit of the encrypted body flipped: always a change (a fixed replacement byte would equal
    // the one-byte body of 't' once in 256 runs).
    const body = Buffer.from(parts[4], 'base64url');
    body[0] ^= 1;
    parts[4] = body.toString('base64url');
    expect(cipher.open(parts.join(':'), 'c')).toBeNull();
    expect(cipher.open('v2:hex:a:b:c', 'c')).toBeNull();
    expect(cipher.open('garbage', 'c')).toBeNull();
  });

  it('refuses at boot missing, short, badly named or duplicate keys, saying how to fix them', () => {
    expect(() => new McpTokenCipher(undefined)).toThrow(/oauth.encryptionKeys.*openssl rand -base64 32/);
    expect(() => new McpTokenCipher([])).toThrow(McpConfigurationError);
    expect(() => new McpTokenCipher([{ id: 'k', key: 'c2hvcnQ=' }])).toThrow(/32 bytes/);
    expect(() => new McpTokenCipher([{ id: 'bad id', key: randomBytes(32).toString('base64') }])).toThrow(
      'McpClientModule option "oauth.encryptionKeys[0]" needs an "id"',
    );
    const twice = key('same');
    expect(() => new McpTokenCipher([twice, { ...twice }])).toThrow(
      'McpClientModule option "oauth.encryptionKeys" names the key "same" twice',
    );
  });
});
