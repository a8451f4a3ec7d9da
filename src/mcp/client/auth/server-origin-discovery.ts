import { isSecureOrLoopback, sameOrigin, sameUrl } from './authorization-server-trust';
import { McpOAuthClientError, McpUntrustedAuthorizationServerError } from './oauth-client.errors';
import {
  getJson,
  shown,
  userFlowMetadata,
  type OAuthDiscovery,
  type OAuthDiscoveryPolicy,
  type OAuthUserFlowMetadata,
} from './oauth-metadata';

/** The revision whose discovery this is, sent with the metadata request as that revision asks. */
const LEGACY_REVISION = '2025-03-26';

/**
 * Discovery of the MCP authorization specification of 2025-03-26, for a server that publishes no
 * Protected Resource Metadata: the authorization base URL is the server's origin (its path
 * dropped); the client reads the RFC 8414 metadata at
 * `<origin>/.well-known/oauth-authorization-server`, and without it (404) uses the default
 * endpoints `<origin>/authorize`, `/token` and `/register`.
 *
 * Credentials still go only where the configuration trusts: the origin must be one of the trusted
 * issuers (`authorizationServer` or `trustedAuthorizationServers`), the metadata's issuer and
 * token endpoint must be on that origin (or the token endpoint the one the policy pins).
 * @param tried the Protected Resource Metadata URLs that answered 404, for the messages
 * @throws McpUntrustedAuthorizationServerError when the origin is not trusted, or its metadata points elsewhere
 * @throws McpOAuthClientError when the metadata cannot be read or is unusable
 */
export async function discoverAtServerOrigin(
  endpoint: URL,
  policy: OAuthDiscoveryPolicy,
  tried: readonly string[],
): Promise<OAuthDiscovery> {
  const origin = endpoint.origin;
  const resource = `${origin}${endpoint.pathname}`;
  if (!policy.trustedIssuers.some((issuer) => sameUrl(issuer, origin)))
    throw new McpUntrustedAuthorizationServerError(
      `${resource} publishes no Protected Resource Metadata (tried ${tried.join(', ')}), so its authorization server is its own origin ${origin} (MCP 2025-03-26), ` +
        `which is not trusted: the client sends credentials only to ${policy.trustedIssuers.join(' or ')}; add ${origin} to authorizationServer or trustedAuthorizationServers if it is the authorization server`,
    );
  const metadataUrl = `${origin}/.well-known/oauth-authorization-server`;
  const { status, body } = await getJson(metadataUrl, policy, { 'MCP-Protocol-Version': LEGACY_REVISION });
  if (status === 404) return defaultEndpoints(origin, resource, policy);
  if (status !== 200 || !body)
    throw new McpOAuthClientError(`The authorization server metadata at ${metadataUrl} answered HTTP ${status}`);
  // The 2025-03-26 revision locates the metadata by the origin: the issuer it states may carry a path, not another origin.
  const issuer = body.issuer;
  if (typeof issuer !== 'string' || !sameOrigin(issuer, origin))
    throw new McpUntrustedAuthorizationServerError(
      `The metadata at ${metadataUrl} names the issuer ${typeof issuer === 'string' ? shown([issuer]) : JSON.stringify(issuer ?? null)}, which is not on ${origin}`,
    );
  const methods = Array.isArray(body.token_endpoint_auth_methods_supported)
    ? body.token_endpoint_auth_methods_supported.filter((m): m is string => typeof m === 'string')
    : [];
  const announced = body.token_endpoint;
  const pinned = policy.tokenEndpoint;
  if (pinned !== undefined && announced !== undefined && (typeof announced !== 'string' || !sameUrl(announced, pinned)))
    throw new McpUntrustedAuthorizationServerError(
      `The authorization server ${origin} announces the token endpoint ${typeof announced === 'string' ? shown([announced]) : JSON.stringify(announced)}, ` +
        `not the pinned tokenEndpoint ${pinned}; the client credentials are sent only to the pinned one`,
    );
  const tokenEndpoint = pinned ?? announced;
  if (typeof tokenEndpoint !== 'string')
    throw new McpOAuthClientError(`The authorization server ${origin} announces no token_endpoint`);
  if (pinned === undefined && (!sameOrigin(tokenEndpoint, origin) || !isSecureOrLoopback(new URL(tokenEndpoint))))
    throw new McpUntrustedAuthorizationServerError(
      `The authorization server ${origin} announces the token endpoint ${shown([tokenEndpoint])}, which is not on its origin; the client credentials are sent only there`,
    );
  const user = userFlowMetadata(body, {});
  for (const field of ['authorizationEndpoint', 'registrationEndpoint'] as const) {
    const url = user[field];
    // Where the user is sent and where the app registers: the trusted origin too.
    if (url !== null && !sameOrigin(url, origin)) user[field] = null;
  }
  return { resource, issuer, tokenEndpoint, authMethods: methods, user };
}

/** The endpoints the 2025-03-26 revision assigns a server without metadata, at its origin. */
function defaultEndpoints(origin: string, resource: string, policy: OAuthDiscoveryPolicy): OAuthDiscovery {
  const user: OAuthUserFlowMetadata = {
    authorizationEndpoint: `${origin}/authorize`,
    registrationEndpoint: `${origin}/register`,
    // The revision makes PKCE mandatory for every client, so S256 goes without saying.
    pkceMethods: ['S256'],
    issParameterSupported: false,
    clientIdMetadataDocuments: false,
    resourceScopes: [],
  };
  return { resource, issuer: origin, tokenEndpoint: policy.tokenEndpoint ?? `${origin}/token`, authMethods: [], user };
}
