import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { protectedResourceMetadataUrl, resolveOAuthOptions } from './mcp-oauth.options';
import type { McpModuleOptions } from '../interfaces/mcp-module-options.interface';

const AS = 'https://auth.example.com';

function resolve(options: Partial<McpModuleOptions.OAuth>, path = '/mcp') {
  return resolveOAuthOptions('m', path, { authorizationServers: [AS], ...options })!;
}

describe('resolveOAuthOptions', () => {
  it('is undefined without the option', () => {
    expect(resolveOAuthOptions('m', '/mcp', undefined)).toBeUndefined();
  });

  it('derives the resource from publicUrl and the mount path, and the metadata URL from the resource', () => {
    const oauth = resolve({ publicUrl: 'https://MCP.example.com/', requiredScopes: ['mcp:tools'] }, '/tools/mcp');
    expect(oauth).toEqual({
      resource: 'https://mcp.example.com/tools/mcp',
      metadataUrl: 'https://mcp.example.com/.well-known/oauth-protected-resource/tools/mcp',
      requiredScopes: ['mcp:tools'],
      maxAgeSec: 3600,
      document: {
        resource: 'https://mcp.example.com/tools/mcp',
        authorization_servers: [AS],
        scopes_supported: ['mcp:tools'],
        bearer_methods_supported: ['header'],
      },
    });
  });

  it('keeps a prefix of publicUrl (an app behind a proxy path)', () => {
    expect(resolve({ publicUrl: 'https://example.com/api' }).resource).toBe('https://example.com/api/mcp');
  });

  it('takes an explicit resource as its canonical form, and a root resource gets the root metadata URL', () => {
    expect(resolve({ resource: 'https://example.com/' })).toMatchObject({
      resource: 'https://example.com',
      metadataUrl: 'https://example.com/.well-known/oauth-protected-resource',
    });
    expect(protectedResourceMetadataUrl('https://example.com:8443/a/b')).toBe(
      'https://example.com:8443/.well-known/oauth-protected-resource/a/b',
    );
  });

  it('publishes scopesSupported over requiredScopes, and no scopes_supported when neither is given', () => {
    expect(
      resolve({ publicUrl: 'https://x.example', scopesSupported: ['a', 'b'], requiredScopes: ['a'] }).document
        .scopes_supported,
    ).toEqual(['a', 'b']);
    expect(resolve({ publicUrl: 'https://x.example' }).document).not.toHaveProperty('scopes_supported');
  });

  it('accepts http on loopback hosts only', () => {
    expect(resolve({ publicUrl: 'http://127.0.0.1:3000' }).resource).toBe('http://127.0.0.1:3000/mcp');
    expect(resolve({ publicUrl: 'http://localhost:3000' }).resource).toBe('http://localhost:3000/mcp');
  });

  it.each<[string, Partial<McpModuleOptions.OAuth>, RegExp]>([
    ['neither publicUrl nor resource', {}, /oauth\.publicUrl is required/],
    ['both publicUrl and resource', { publicUrl: 'https://a.example', resource: 'https://a.example/mcp' }, /exclusive/],
    ['plain http on a public host', { publicUrl: 'http://mcp.example.com' }, /must use https/],
    ['a relative URL', { publicUrl: '/mcp' }, /absolute https URL/],
    ['a fragment', { resource: 'https://a.example/mcp#x' }, /fragment/],
    ['a query on publicUrl', { publicUrl: 'https://a.example/?x=1' }, /query/],
    [
      'no authorization server',
      { publicUrl: 'https://a.example', authorizationServers: [] },
      /at least one authorization server/,
    ],
    [
      'an http authorization server',
      { publicUrl: 'https://a.example', authorizationServers: ['http://auth.example.com'] },
      /authorizationServers\[0\] must use https/,
    ],
    ['a scope with a space', { publicUrl: 'https://a.example', requiredScopes: ['a b'] }, /invalid scope "a b"/],
    ['a scope with a quote', { publicUrl: 'https://a.example', requiredScopes: ['a"b'] }, /invalid scope/],
    [
      'a required scope not supported',
      { publicUrl: 'https://a.example', requiredScopes: ['admin'], scopesSupported: ['read'] },
      /missing: admin/,
    ],
    ['a negative max age', { publicUrl: 'https://a.example', metadataMaxAgeMs: -1 }, /metadataMaxAgeMs/],
    [
      'an unknown key',
      { publicUrl: 'https://a.example', requiredScope: ['a'] } as Partial<McpModuleOptions.OAuth>,
      /unknown option "requiredScope" \(did you mean "requiredScopes"/,
    ],
  ])('refuses %s', (_label, options, message) => {
    expect(() => resolve(options)).toThrow(McpConfigurationError);
    expect(() => resolve(options)).toThrow(message);
  });

  it('refuses an option that is not an object', () => {
    expect(() => resolveOAuthOptions('m', '/mcp', 'https://a.example' as unknown as McpModuleOptions.OAuth)).toThrow(
      /oauth must be an object/,
    );
  });
});

describe("resolveOAuthOptions with the app's own authorization server", () => {
  const own = 'https://mcp.example.com/oauth';

  it('names it when the mount lists no authorization server, and keeps a list the mount gives', () => {
    expect(resolveOAuthOptions('m', '/mcp', { publicUrl: 'https://mcp.example.com' }, own)!.document).toMatchObject({
      authorization_servers: [own],
    });
    expect(
      resolveOAuthOptions('m', '/mcp', { publicUrl: 'https://mcp.example.com', authorizationServers: [AS] }, own)!
        .document.authorization_servers,
    ).toEqual([AS]);
  });

  it('without it, a mount that lists none is refused, naming both ways out', () => {
    expect(() => resolveOAuthOptions('m', '/mcp', { publicUrl: 'https://mcp.example.com' })).toThrow(
      'oauth.authorizationServers must list at least one authorization server (its issuer URL), or the app imports McpAuthorizationServerModule',
    );
  });
});
