import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpResolvedOptions } from '../config/mcp.options';
import { IntrospectionVerifier } from './introspection-verifier';
import { JwtVerifier } from './jwt-verifier';
import { resolveOAuthOptions } from '../config/mcp-oauth.options';

function mountWith(authorizationServers: string[]): McpResolvedOptions {
  return {
    oauth: resolveOAuthOptions('m', '/mcp', { publicUrl: 'https://mcp.example.com', authorizationServers }),
  } as McpResolvedOptions;
}

describe('verifier configuration', () => {
  it('JwtVerifier takes issuer and audience from the mount', () => {
    expect(() => new JwtVerifier({}, mountWith(['https://auth.example.com']))).not.toThrow();
  });

  it.each([
    ['no oauth option and no issuer', {}, undefined, /JwtVerifier needs an issuer/],
    [
      'several authorization servers and no issuer',
      {},
      mountWith(['https://a.example', 'https://b.example']),
      /several authorization servers/,
    ],
    ['an issuer but no audience', { issuer: 'https://a.example' }, undefined, /needs an audience/],
    ['alg none', { algorithms: ['none'] }, mountWith(['https://a.example']), /\["none"\] are not accepted/],
    [
      'an HMAC algorithm',
      { algorithms: ['RS256', 'HS256'] },
      mountWith(['https://a.example']),
      /\["HS256"\] are not accepted/,
    ],
    ['no algorithm', { algorithms: [] }, mountWith(['https://a.example']), /not accepted/],
    ['a negative clock tolerance', { clockToleranceSec: -1 }, mountWith(['https://a.example']), /clockToleranceSec/],
    [
      'a zero maxResponseBytes',
      { maxResponseBytes: 0 },
      mountWith(['https://a.example']),
      'JwtVerifier: maxResponseBytes must be an integer >= 1 (got 0); remove it to use the default 1048576 bytes.',
    ],
    [
      'a fractional timeoutMs',
      { timeoutMs: 2.5 },
      mountWith(['https://a.example']),
      'JwtVerifier: timeoutMs must be an integer >= 1 (got 2.5); remove it to use the default 5000 ms.',
    ],
  ])('JwtVerifier refuses %s', (_label, options, mount, message) => {
    expect(() => new JwtVerifier(options, mount)).toThrow(McpConfigurationError);
    expect(() => new JwtVerifier(options, mount)).toThrow(message);
  });

  it('JwtVerifier.configure binds its settings to a class the module can build', () => {
    const Configured = JwtVerifier.configure({ issuer: 'https://a.example', audience: 'https://mcp.example.com/mcp' });
    expect(new Configured()).toBeInstanceOf(JwtVerifier);
  });

  it('IntrospectionVerifier needs client credentials', () => {
    expect(
      () => new IntrospectionVerifier({ clientId: 'rs', clientSecret: '' }, mountWith(['https://a.example'])),
    ).toThrow(/needs clientId and clientSecret/);
    const Configured = IntrospectionVerifier.configure({ clientId: 'rs', clientSecret: 's' });
    expect(new Configured(mountWith(['https://a.example']))).toBeInstanceOf(IntrospectionVerifier);
  });

  it('IntrospectionVerifier refuses a timeoutMs or maxResponseBytes that is not a positive integer', () => {
    const build = (limits: { timeoutMs?: number; maxResponseBytes?: number }) => () =>
      new IntrospectionVerifier({ clientId: 'rs', clientSecret: 's', ...limits }, mountWith(['https://a.example']));
    expect(build({ maxResponseBytes: -1 })).toThrow(McpConfigurationError);
    expect(build({ maxResponseBytes: -1 })).toThrow(
      'IntrospectionVerifier: maxResponseBytes must be an integer >= 1 (got -1); remove it to use the default 1048576 bytes.',
    );
    expect(build({ timeoutMs: Number.NaN })).toThrow(
      'IntrospectionVerifier: timeoutMs must be an integer >= 1 (got NaN); remove it to use the default 5000 ms.',
    );
    expect(build({ timeoutMs: 1, maxResponseBytes: 1 })).not.toThrow();
  });
});

describe('IntrospectionVerifier without settings', () => {
  it('says how to configure it', () => {
    expect(() => new IntrospectionVerifier(undefined as never, mountWith(['https://a.example']))).toThrow(
      /IntrospectionVerifier\.configure\(\{ clientId, clientSecret \}\)/,
    );
  });
});
