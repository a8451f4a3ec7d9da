// A real OAuth 2.1 authorization server for the OAuth suites: oidc-provider (an ES module, hence
// this separate Node process) with client credentials, resource indicators, introspection and revocation.
// Configuration comes from OIDC_CONFIG (JSON): { port, clients: [{ client_id, client_secret, scope,
// token_endpoint_auth_method?, jwks? }],
// resources: { [uri]: { scope, format: 'jwt' | 'opaque', ttl } } }. Prints "OIDC READY <issuer>", and
// "OIDC TOKEN <client_id> <grant_type>" for each token it issues ("OIDC TOKEN REFUSED <client_id>
// <grant_type> <error>" for each grant request it refuses). A client with redirect_uris uses the authorization
// code flow (PKCE, refresh tokens rotated on every use); its users sign in and consent at once: the
// interaction route logs in the account named by the `x-test-user` header (a browserless user agent).
// `registration: true` opens dynamic client registration (RFC 7591) at /reg; it prints
// "OIDC REGISTERED <client_id>" for each client registered. `clientIdMetadataDocuments: true`
// accepts https client ids whose Client ID Metadata Document it fetches ("OIDC CIMD FETCH <url>"),
// from loopback too, and over plain http for an https://127.0.0.1 URL, as a TLS-terminating proxy
// in front of the test app would.
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { errors } from 'oidc-provider';

const config = JSON.parse(process.env.OIDC_CONFIG);
const issuer = `http://127.0.0.1:${config.port}`;
const { privateKey } = await generateKeyPair('RS256', { extractable: true });
const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-signing-key', alg: 'RS256', use: 'sig' };

/** oidc-provider's outgoing requests: the metadata documents of test apps, on loopback without TLS. */
async function fetchForTests(url, options) {
  const target = new URL(url);
  if (config.clientIdMetadataDocuments && target.protocol === 'https:' && target.hostname === '127.0.0.1') {
    console.log(`OIDC CIMD FETCH ${target.href}`);
    target.protocol = 'http:';
  }
  // Its dispatcher refuses special-use addresses (loopback included): the test peers are all there.
  delete options.dispatcher;
  return globalThis.fetch(target, options);
}

const provider = new Provider(issuer, {
  fetch: fetchForTests,
  clients: config.clients.map((client) =>
    client.redirect_uris
      ? {
          ...client,
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: client.token_endpoint_auth_method ?? 'client_secret_basic',
        }
      : {
          ...client,
          grant_types: ['client_credentials'],
          response_types: [],
          redirect_uris: [],
          token_endpoint_auth_method: client.token_endpoint_auth_method ?? 'client_secret_basic',
        },
  ),
  issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  rotateRefreshToken: () => true,
  jwks: { keys: [signingKey] },
  scopes: [...new Set(Object.values(config.resources).flatMap((resource) => resource.scope.split(' ')))],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    registration: { enabled: config.registration === true },
    clientIdMetadataDocument: { enabled: config.clientIdMetadataDocuments === true, ack: 'draft-02' },
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
provider.on('grant.success', (ctx) =>
  console.log(`OIDC TOKEN ${ctx.oidc.client?.clientId} ${ctx.oidc.params?.grant_type ?? 'unknown'}`),
);
provider.on('grant.error', (ctx, error) =>
  console.log(
    `OIDC TOKEN REFUSED ${ctx.oidc.client?.clientId ?? ctx.oidc.params?.client_id ?? 'unknown'} ${ctx.oidc.params?.grant_type ?? 'unknown'} ${error.error ?? 'error'}`,
  ),
);
provider.on('registration_create.success', (_ctx, client) => console.log(`OIDC REGISTERED ${client.clientId}`));
provider.on('server_error', (_ctx, error) => console.error('oidc-provider server_error', error));

/** Signs in the `x-test-user` account and grants what the client asked for, without a page. */
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const user = req.headers['x-test-user'] || 'anonymous';
  if (details.prompt.name === 'login') {
    return provider.interactionFinished(req, res, { login: { accountId: user } }, { mergeWithLastSubmission: false });
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
  const missing = details.prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
    grant.addResourceScope(indicator, scopes.join(' '));
  const grantId = await grant.save();
  return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

const callback = provider.callback();
const server = createServer((req, res) => {
  if (!req.url.startsWith('/interaction/')) return callback(req, res);
  interaction(req, res).catch((error) => {
    console.error('oidc-provider interaction failed', error);
    res.writeHead(500).end(String(error));
  });
});
server.listen(config.port, '127.0.0.1', () => console.log(`OIDC READY ${issuer}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
