import { randomBytes } from 'node:crypto';
import { McpConfigurationError } from '../../../errors/mcp-configuration.errors';
import type { OAuthDiscovery } from '../oauth-discovery';
import { authorizationCode, type AuthorizationCodeAuth } from './authorization-code.auth';
import { McpOAuthClientRegistrar, registrationKey } from './client-registration';
import { McpGrantSealer } from './grant-sealer';
import { publicClientMetadata } from './registration-request';

const ISSUER = 'https://login.example.com';

/** What discovery found at an authorization server offering dynamic registration only. */
const discovery: OAuthDiscovery = {
  resource: 'https://mcp.example.com/mcp',
  issuer: ISSUER,
  tokenEndpoint: `${ISSUER}/token`,
  authMethods: [],
  user: {
    authorizationEndpoint: `${ISSUER}/authorize`,
    registrationEndpoint: `${ISSUER}/register`,
    pkceMethods: ['S256'],
    clientIdMetadataDocuments: false,
    resourceScopes: [],
    issParameterSupported: false,
  },
};

describe('McpOAuthClientRegistrar without a registration store', () => {
  const sealer = new McpGrantSealer([{ id: 'k1', key: randomBytes(32).toString('base64') }]);
  const registrar = new McpOAuthClientRegistrar(undefined, sealer, 'https://app.example.com/cb', 'App');
  const auth = authorizationCode({ dynamicRegistration: true, authorizationServer: ISSUER }) as AuthorizationCodeAuth;

  it('refuses to register, saying where registrations live', async () => {
    await expect(registrar.client(auth, discovery)).rejects.toThrow(McpConfigurationError);
    await expect(registrar.client(auth, discovery)).rejects.toThrow(/keeps its registrations in the database/);
  });

  it('treats a client id it cannot look up as a public client', async () => {
    await expect(registrar.issuedTo(auth, discovery, 'registered-elsewhere')).resolves.toEqual({
      clientId: 'registered-elsewhere',
    });
  });

  it('keys a registration by issuer and redirect URI', () => {
    expect(registrationKey(ISSUER, 'https://app.example.com/cb')).toMatch(/^[0-9a-f]{64}$/);
    expect(registrationKey(ISSUER, 'https://app.example.com/cb')).not.toBe(
      registrationKey(ISSUER, 'https://app.example.com/other'),
    );
  });
});

describe('publicClientMetadata', () => {
  it("registers an app on the user's machine (loopback redirect) as native, any other as web", () => {
    expect(publicClientMetadata('http://127.0.0.1:8123/cb', 'Desk')).toMatchObject({ application_type: 'native' });
    expect(publicClientMetadata('http://localhost:8123/cb', 'Desk')).toMatchObject({ application_type: 'native' });
    expect(publicClientMetadata('https://app.example.com/cb', 'App')).toEqual({
      client_name: 'App',
      application_type: 'web',
      redirect_uris: ['https://app.example.com/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
  });
});
