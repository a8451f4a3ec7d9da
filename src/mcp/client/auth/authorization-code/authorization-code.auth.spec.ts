import { McpConfigurationError } from '../../../errors/mcp-configuration.errors';
import { MemoryTokenStore } from '../memory-token.store';
import { authorizationCode, AuthorizationCodeAuth } from './authorization-code.auth';

const ISSUER = { authorizationServer: 'https://login.example.com' };

describe('authorizationCode({...}): how the client gets its client id', () => {
  it.each([
    ['a pre-registered client id', { clientId: 'my-app', clientSecret: 's3cret' }, 'my-app'],
    [
      'a Client ID Metadata Document URL',
      { clientMetadataUrl: 'https://app.example.com/oauth/client.json' },
      'https://app.example.com/oauth/client.json',
    ],
    [
      'a loopback metadata URL (development)',
      { clientMetadataUrl: 'http://127.0.0.1:3000/client.json' },
      'http://127.0.0.1:3000/client.json',
    ],
    ['dynamic registration', { dynamicRegistration: true }, '(dynamically registered)'],
    [
      'both a metadata URL and dynamic registration',
      { clientMetadataUrl: 'https://app.example.com/client.json', dynamicRegistration: true },
      'https://app.example.com/client.json',
    ],
  ])('accepts %s', (_what, options, label) => {
    const auth = authorizationCode({ ...ISSUER, ...options }) as AuthorizationCodeAuth;
    expect(auth.label).toBe(label);
    expect(auth.issuers).toEqual(['https://login.example.com']);
  });

  it.each([
    [
      'no way at all',
      {},
      /the client needs a client id at the authorization server\. Give "clientId" .*"clientMetadataUrl" .*"dynamicRegistration: true"/,
    ],
    ['dynamic registration turned off alone', { dynamicRegistration: false }, /the client needs a client id/],
    ['an empty clientId', { clientId: '' }, /needs "clientId" to be a non-empty string/],
    ['a clientId that is no string', { clientId: 42 }, /needs "clientId" to be a non-empty string/],
    [
      'a clientId with another way',
      { clientId: 'my-app', dynamicRegistration: true },
      /"clientId" comes first .* would never be used/,
    ],
    [
      'a clientId with a metadata URL',
      { clientId: 'my-app', clientMetadataUrl: 'https://app.example.com/client.json' },
      /"clientId" comes first/,
    ],
    [
      'a secret without clientId',
      { clientSecret: 's3cret', dynamicRegistration: true },
      /"clientSecret" belongs to a pre-registered client/,
    ],
    [
      'dynamicRegistration that is no boolean',
      { dynamicRegistration: 'yes' },
      /"dynamicRegistration" must be true or false, not "yes"/,
    ],
    [
      'a metadata URL that is no string',
      { clientMetadataUrl: 7 },
      /"clientMetadataUrl" 7 is not the URL of a Client ID Metadata Document/,
    ],
    [
      'a relative metadata URL',
      { clientMetadataUrl: '/client.json' },
      /"clientMetadataUrl" "\/client.json" is not the URL/,
    ],
    [
      'a plain http metadata URL',
      { clientMetadataUrl: 'http://app.example.com/client.json' },
      /is not the URL of a Client ID Metadata Document: give an https URL with a path/,
    ],
    ['a metadata URL without a path', { clientMetadataUrl: 'https://app.example.com/' }, /is not the URL/],
    ['a metadata URL with a query', { clientMetadataUrl: 'https://app.example.com/client.json?v=1' }, /is not the URL/],
    [
      'a metadata URL with a fragment',
      { clientMetadataUrl: 'https://app.example.com/client.json#x' },
      /is not the URL/,
    ],
    [
      'a metadata URL with credentials',
      { clientMetadataUrl: 'https://me:pw@app.example.com/client.json' },
      /is not the URL/,
    ],
    [
      'a metadata URL not in canonical form',
      { clientMetadataUrl: 'https://APP.example.com/a/../client.json' },
      /is not the URL/,
    ],
  ])('refuses %s, saying what to give', (_what, options, message) => {
    const build = () => authorizationCode({ ...ISSUER, ...(options as authorizationCode.Options) });
    expect(build).toThrow(McpConfigurationError);
    expect(build).toThrow(message);
  });

  it('refuses missing options altogether', () => {
    expect(() => authorizationCode(undefined as unknown as authorizationCode.Options)).toThrow(
      /authorizationCode\(\{\.\.\.\}\): the client needs a client id/,
    );
  });

  it('names the client by how it gets its id in the trust messages and when used outside the client module', () => {
    expect(() => authorizationCode({ dynamicRegistration: true })).toThrow(
      /"\(dynamically registered\)" names no authorization server/,
    );
    const auth = authorizationCode({ ...ISSUER, clientMetadataUrl: 'https://app.example.com/client.json' });
    expect(() =>
      auth.getToken({ url: new URL('https://mcp.example.com/mcp'), server: 'crm' }, new MemoryTokenStore()),
    ).toThrow(
      'authorizationCode() of client "https://app.example.com/client.json" is only usable as the "auth" of a server of McpClientModule',
    );
  });
});
