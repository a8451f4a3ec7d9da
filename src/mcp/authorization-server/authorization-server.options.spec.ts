import { resolveAuthorizationServerOptions, type McpAuthorizationServerOptions } from './authorization-server.options';

const upstream = { issuer: 'https://login.example.com', clientId: 'as', clientSecret: 'secret' };

function resolve(options: Partial<McpAuthorizationServerOptions>) {
  return resolveAuthorizationServerOptions({ publicUrl: 'https://mcp.example.com', upstream, ...options });
}

describe('resolveAuthorizationServerOptions', () => {
  it('derives the issuer from publicUrl and path, with the defaults', () => {
    expect(resolve({})).toMatchObject({
      issuer: 'https://mcp.example.com/oauth',
      path: '/oauth',
      accessTokenTtlSec: 3600,
      refreshTokenTtlSec: 1_209_600,
      keyRotationSec: 0,
      upstreamTimeoutMs: 5000,
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
  });

  it.each<[string, Partial<McpAuthorizationServerOptions> | null, string]>([
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
      { upstream: { ...upstream, kind: 'saml' } as unknown as McpAuthorizationServerOptions['upstream'] },
      'upstream.kind must be "oidc" or "github"',
    ],
    [
      'a bad GitHub API URL',
      { upstream: { kind: 'github', clientId: 'a', clientSecret: 'b', apiUrl: 'ftp://api' } },
      'upstream.apiUrl must use https',
    ],
    ['a zero token lifetime', { accessTokenTtlSec: 0 }, 'accessTokenTtlSec must be an integer of 1 or more'],
    ['a negative rotation', { keyRotationSec: -1 }, 'keyRotationSec must be an integer of 0 or more'],
  ])('refuses %s, naming the option', (_case, options, message) => {
    const call = () =>
      options === null
        ? resolveAuthorizationServerOptions(null as unknown as McpAuthorizationServerOptions)
        : resolve(options);
    expect(call).toThrow(`McpAuthorizationServerModule: ${message}`);
  });
});
