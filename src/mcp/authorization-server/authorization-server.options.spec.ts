import { randomBytes } from 'node:crypto';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import {
  resolveAuthorizationServerOptions,
  type McpAuthorizationServerModuleOptions,
} from './authorization-server.options';

const upstream = { issuer: 'https://login.example.com', clientId: 'as', clientSecret: 'secret' };
const encryptionKeys = [{ id: 'k1', key: randomBytes(32).toString('base64') }];

function resolve(options: Partial<McpAuthorizationServerModuleOptions>) {
  return resolveAuthorizationServerOptions({
    publicUrl: 'https://mcp.example.com',
    upstream,
    encryptionKeys,
    ...options,
  });
}

describe('resolveAuthorizationServerOptions', () => {
  it('derives the issuer from publicUrl and path, with the defaults (lifetimes in whole seconds for oidc-provider)', () => {
    expect(resolve({})).toMatchObject({
      issuer: 'https://mcp.example.com/oauth',
      path: '/oauth',
      accessTokenTtlSec: 3600,
      refreshTokenTtlSec: 1_209_600,
      keyRotationMs: 0,
      upstreamTimeoutMs: 5000,
      clientIdMetadataDocuments: true,
      allowLoopbackHttp: false,
      trustProxy: false,
    });
    expect(resolve({ publicUrl: 'https://mcp.example.com/tenant/', path: 'auth/' })).toMatchObject({
      issuer: 'https://mcp.example.com/tenant/auth',
      path: '/auth',
    });
    expect(resolve({ publicUrl: 'http://localhost:3000' }).issuer).toBe('http://localhost:3000/oauth');
    expect(
      resolve({ upstream: { kind: 'github', clientId: 'a', clientSecret: 'b', webUrl: 'https://ghe.example.com' } })
        .upstream,
    ).toMatchObject({ kind: 'github' });
    // Milliseconds rounded to whole seconds.
    expect(resolve({ accessTokenTtlMs: 90_400, refreshTokenTtlMs: 1_600 })).toMatchObject({
      accessTokenTtlSec: 90,
      refreshTokenTtlSec: 2,
    });
  });

  it('seals with the first encryption key and opens with all of them', () => {
    const older = { id: 'old', key: randomBytes(32).toString('hex') };
    const sealed = resolve({ encryptionKeys: [older] }).cipher.seal('jwk', 'ctx');
    const rotated = resolve({ encryptionKeys: [...encryptionKeys, older] }).cipher;
    expect(rotated.open(sealed, 'ctx')).toBe('jwk');
    expect(rotated.seal('jwk', 'ctx')).toMatch(/^v1:k1:/);
  });

  it.each<[string, Partial<McpAuthorizationServerModuleOptions> | null, string]>([
    ['no options', null, 'options are required'],
    ['a publicUrl that is not a URL', { publicUrl: 'mcp.example.com' }, 'publicUrl must be an absolute https URL'],
    ['plain http off loopback', { publicUrl: 'http://mcp.example.com' }, 'publicUrl must use https'],
    ['a query', { publicUrl: 'https://mcp.example.com/?a=b' }, 'publicUrl must have no query or fragment'],
    ['an empty path', { path: '/' }, 'path must not be empty'],
    ['no upstream', { upstream: undefined }, 'upstream is required'],
    [
      'no client secret',
      { upstream: { ...upstream, clientSecret: '' } },
      'upstream.clientId and upstream.clientSecret',
    ],
    [
      'an http upstream issuer',
      { upstream: { ...upstream, issuer: 'http://login.example.com' } },
      'upstream.issuer must use https',
    ],
    [
      'an unknown kind',
      { upstream: { ...upstream, kind: 'saml' } as unknown as McpAuthorizationServerModuleOptions['upstream'] },
      'upstream.kind must be "oidc" or "github"',
    ],
    [
      'a bad GitHub API URL',
      { upstream: { kind: 'github', clientId: 'a', clientSecret: 'b', apiUrl: 'ftp://api' } },
      'upstream.apiUrl must use https',
    ],
    ['a zero token lifetime', { accessTokenTtlMs: 0 }, 'accessTokenTtlMs must be an integer of at least 1000'],
    ['a negative rotation', { keyRotationMs: -1 }, 'keyRotationMs must be an integer of 0 or more'],
    [
      'a lifetime in seconds by mistake',
      { accessTokenTtlMs: 60 },
      'accessTokenTtlMs must be an integer of at least 1000',
    ],
    ['no encryption keys', { encryptionKeys: undefined }, 'option "encryptionKeys" is required'],
    ['an empty key list', { encryptionKeys: [] }, 'option "encryptionKeys" is required'],
    [
      'a short key',
      { encryptionKeys: [{ id: 'k1', key: 'c2hvcnQ=' }] },
      'option "encryptionKeys[0]" ("k1") needs a "key" of 32 bytes',
    ],
    [
      'a key named twice',
      { encryptionKeys: [...encryptionKeys, ...encryptionKeys] },
      'option "encryptionKeys" names the key "k1" twice',
    ],
    [
      'an upstream key GitHub does not have',
      { upstream: { kind: 'github', clientId: 'a', clientSecret: 'b', issuer: 'https://github.com' } as never },
      'option "upstream" (GitHub): unknown option "issuer"',
    ],
    [
      'a misspelled upstream key',
      { upstream: { ...upstream, scope: ['openid'] } as never },
      'unknown option "scope" (did you mean "scopes"?',
    ],
    ['a path that is not a string', { path: 7 as never }, 'path must be a string'],
    [
      'an option in seconds of the former shape',
      { accessTokenTtlSec: 3600 } as Partial<McpAuthorizationServerModuleOptions>,
      'accessTokenTtlSec',
    ],
  ])('refuses %s, naming the option', (_case, options, message) => {
    const call = () =>
      options === null
        ? resolveAuthorizationServerOptions(null as unknown as McpAuthorizationServerModuleOptions)
        : resolve(options);
    expect(call).toThrow(McpConfigurationError);
    expect(call).toThrow(`McpAuthorizationServerModule`);
    expect(call).toThrow(message);
  });

  it('never repeats a secret or a key in its messages', () => {
    const secret = 'upstream-secret-never-shown';
    const key = Buffer.from('not thirty-two bytes, and secret').toString('base64').slice(0, 20);
    const messages = [
      () => resolve({ upstream: { ...upstream, clientSecret: secret, issuer: 'http://login.example.com' } }),
      () => resolve({ encryptionKeys: [{ id: 'k1', key }] }),
    ].map((call) => {
      try {
        call();
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    });
    expect(messages.every((message) => message.length > 0)).toBe(true);
    expect(messages.join('\n')).not.toContain(secret);
    expect(messages.join('\n')).not.toContain(key);
  });
});
