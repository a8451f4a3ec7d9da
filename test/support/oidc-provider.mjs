// A real OAuth 2.1 authorization server for the OAuth suites: oidc-provider (an ES module, hence
// this separate Node process) with client credentials, resource indicators, introspection and revocation.
// Configuration comes from OIDC_CONFIG (JSON): { port, clients: [{ client_id, client_secret, scope,
// token_endpoint_auth_method?, jwks? }],
// resources: { [uri]: { scope, format: 'jwt' | 'opaque', ttl } } }. Prints "OIDC READY <issuer>", and
// "OIDC TOKEN <client_id>" for each token it issues.
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { errors } from 'oidc-provider';

const config = JSON.parse(process.env.OIDC_CONFIG);
const issuer = `http://127.0.0.1:${config.port}`;
const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-signing-key', alg: 'RS256', use: 'sig' };

const provider = new Provider(issuer, {
  clients: config.clients.map((client) => ({
    ...client,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: client.token_endpoint_auth_method ?? 'client_secret_basic',
  })),
  jwks: { keys: [signingKey] },
  scopes: [...new Set(Object.values(config.resources).flatMap((resource) => resource.scope.split(' ')))],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo(ctx, resourceIndicator) {
        const resource = config.resources[resourceIndicator];
        if (!resource) throw new errors.InvalidTarget(`unknown resource ${resourceIndicator}`);
        return {
          scope: resource.scope,
          audience: resourceIndicator,
          accessTokenTTL: resource.ttl ?? 600,
          accessTokenFormat: resource.format ?? 'jwt',
        };
      },
    },
  },
});
provider.on('grant.success', (ctx) => console.log(`OIDC TOKEN ${ctx.oidc.client?.clientId}`));
provider.on('server_error', (_ctx, error) => console.error('oidc-provider server_error', error));

const server = createServer(provider.callback());
server.listen(config.port, '127.0.0.1', () => console.log(`OIDC READY ${issuer}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
