import { parseBearerChallenge } from './bearer-challenge.parser';
import type { McpAuthChallenge } from './mcp-client-auth.interface';
import { isSecureOrLoopback, sameOrigin, sameUrl } from './authorization-server-trust';
import { discoverAtServerOrigin } from './server-origin-discovery';
import { McpOAuthClientError, McpUntrustedAuthorizationServerError } from './oauth-client.errors';
import { getJson, shown, userFlowMetadata, type OAuthDiscovery, type OAuthDiscoveryPolicy } from './oauth-metadata';

export type { OAuthDiscovery, OAuthDiscoveryPolicy, OAuthUserFlowMetadata } from './oauth-metadata';
export function protectedResourceMetadataUrls(endpoint: URL): string[] {
  const path = endpoint.pathname === '/' ? '' : endpoint.pathname.replace(/\/$/, '');
  const urls = [`${endpoint.origin}/.well-known/oauth-protected-resource${path}`];
  if (path) urls.push(`${endpoint.origin}/.well-known/oauth-protected-resource`);
  return urls;
}

/** RFC 8414 with the well-known segment before the issuer's path, OpenID Connect discovery the same way, then appended. */
export function authorizationServerMetadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const urls = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
  ];
  if (path) urls.push(`${url.origin}${path}/.well-known/openid-configuration`);
  return urls;
}

/** What the challenge probe sends: a `ping`, harmless should the endpoint answer it without a token. */
const PROBE = JSON.stringify({ jsonrpc: '2.0', id: 'oauth-discovery', method: 'ping' });

/**
 * The `resource_metadata` of the 401 the endpoint answers a request without a token with (RFC
 * 9728 section 5), or null. A POSTed `ping`: servers answer a GET without a session with 405
 * before their guard looks at it. The body is not read.
 */
async function challengedMetadataUrl(endpoint: URL, policy: OAuthDiscoveryPolicy): Promise<string | null> {
  return (await tokenlessChallenge(endpoint, policy.timeoutMs))?.resourceMetadata ?? null;
}

/**
 * The Bearer challenge of the 401 a tokenless request to `endpoint` gets (its `scope`, its
 * `resource_metadata`), or null when it answers anything else or cannot be reached.
 */
export async function tokenlessChallenge(endpoint: URL, timeoutMs: number): Promise<McpAuthChallenge | null> {
  try {
    const headers = { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' };
    const response = await fetch(endpoint, {
      method: 'POST',
      headers,
      body: PROBE,
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
    await response.body?.cancel().catch(() => undefined);
    return response.status === 401 ? parseBearerChallenge(401, response.headers.get('www-authenticate')) : null;
  } catch {
    return null;
  }
}

/**
 * Whether `resource` may stand for `endpoint` (RFC 9728 section 3.3): same origin, and the
 * endpoint's path within the resource's. Else a server could have us get tokens for another
 * resource and send them to it.
 */
export function resourceCovers(resource: string, endpoint: URL): boolean {
  let parsed: URL;
  try {
    parsed = new URL(resource);
  } catch {
    return false;
  }
  const base = parsed.pathname.replace(/\/$/, '');
  return (
    parsed.origin === endpoint.origin &&
    (endpoint.pathname === base || endpoint.pathname.startsWith(`${base}/`) || base === '')
  );
}

/**
 * Whether a `resource_metadata` URL may be read for `endpoint`: only on the endpoint's own
 * origin, so a server cannot point the client's discovery at another host (an internal one, say).
 */
export function metadataUrlAllowed(metadataUrl: string, endpoint: URL): boolean {
  return sameOrigin(metadataUrl, endpoint);
}

/**
 * Finds the token endpoint of an MCP server: its Protected Resource Metadata (at
 * `metadataUrl`, from a `resource_metadata` challenge on the endpoint's origin, else the
 * well-known URLs, else the `resource_metadata` of the 401 a tokenless `ping` gets), then the
 * metadata of the first of its authorization servers the policy trusts. A server with no
 * Protected Resource Metadata at all (404 at both well-known URLs, no `resource_metadata` in its
 * challenge) is discovered the 2025-03-26 way (`discoverAtServerOrigin`). The credentials can only
 * ever go to a trusted issuer: the metadata must state that issuer, and its token endpoint must
 * be on the issuer's origin, or be the one the policy pins (which also serves an issuer without
 * metadata).
 * @throws McpUntrustedAuthorizationServerError when discovery leads anywhere but a trusted issuer
 * @throws McpOAuthClientError saying which URLs were tried
 */
export async function discoverOAuth(
  endpoint: URL,
  metadataUrl: string | null,
  policy: OAuthDiscoveryPolicy,
): Promise<OAuthDiscovery> {
  const label = `${endpoint.origin}${endpoint.pathname}`;
  if (metadataUrl !== null && !metadataUrlAllowed(metadataUrl, endpoint)) {
    throw new McpUntrustedAuthorizationServerError(
      `${label} names the resource_metadata ${shown([metadataUrl])}, which is not on its own origin; the client reads metadata only from the MCP server's origin`,
    );
  }
  const tried: string[] = [];
  let prm: Record<string, unknown> | null = null;
  let absent = true;
  for (const url of metadataUrl ? [metadataUrl] : protectedResourceMetadataUrls(endpoint)) {
    const { status, body } = await getJson(url, policy);
    if (status === 200 && body && typeof body.resource === 'string') {
      prm = body;
      break;
    }
    absent &&= status === 404;
    tried.push(`${url} (HTTP ${status})`);
  }
  if (!prm && !metadataUrl) {
    const challenged = await challengedMetadataUrl(endpoint, policy);
    if (challenged) return discoverOAuth(endpoint, challenged, policy);
    // No Protected Resource Metadata anywhere: a 2025-03-26 server, its authorization server at its origin.
    if (absent) return discoverAtServerOrigin(endpoint, policy, tried);
  }
  if (!prm) throw new McpOAuthClientError(`No Protected Resource Metadata for ${label}: tried ${tried.join(', ')}`);
  const where = `The Protected Resource Metadata of ${label}`;
  if (!resourceCovers(prm.resource as string, endpoint))
    throw new McpOAuthClientError(
      `${where} names the resource ${JSON.stringify(shown([prm.resource as string]))}, which is not this endpoint`,
    );
  const servers = Array.isArray(prm.authorization_servers)
    ? prm.authorization_servers.filter((s): s is string => typeof s === 'string')
    : [];
  if (servers.length === 0) throw new McpOAuthClientError(`${where} names no authorization_servers`);
  const issuer = servers.find((server) => policy.trustedIssuers.includes(server));
  if (issuer === undefined) {
    throw new McpUntrustedAuthorizationServerError(
      `${where} does not name the authorization server ${policy.trustedIssuers.join(' or ')} (it names ${shown(servers)}); ` +
        'the client credentials are sent only to an issuer pinned with authorizationServer or listed in trustedAuthorizationServers',
    );
  }
  const pinned = policy.tokenEndpoint;
  for (const url of authorizationServerMetadataUrls(issuer)) {
    const { status, body } = await getJson(url, policy);
    if (status !== 200 || !body) {
      tried.push(`${url} (HTTP ${status})`);
      continue;
    }
    if (body.issuer !== issuer)
      throw new McpUntrustedAuthorizationServerError(
        `The metadata at ${url} names the issuer ${JSON.stringify(typeof body.issuer === 'string' ? shown([body.issuer]) : (body.issuer ?? null))}, not ${issuer}`,
      );
    const methods = Array.isArray(body.token_endpoint_auth_methods_supported)
      ? body.token_endpoint_auth_methods_supported.filter((m): m is string => typeof m === 'string')
      : [];
    if (pinned !== undefined) {
      // The operator named the endpoint: metadata may confirm it, and must not point elsewhere.
      if (
        body.token_endpoint !== undefined &&
        (typeof body.token_endpoint !== 'string' || !sameUrl(body.token_endpoint, pinned))
      ) {
        throw new McpUntrustedAuthorizationServerError(
          `The authorization server ${issuer} announces the token endpoint ${typeof body.token_endpoint === 'string' ? shown([body.token_endpoint]) : JSON.stringify(body.token_endpoint)}, ` +
            `not the pinned tokenEndpoint ${pinned}; the client credentials are sent only to the pinned one`,
        );
      }
      return { resource: prm.resource as string, issuer, tokenEndpoint: pinned, authMethods: methods };
    }
    if (typeof body.token_endpoint !== 'string')
      throw new McpOAuthClientError(`The authorization server ${issuer} announces no token_endpoint`);
    const tokenEndpoint = body.token_endpoint;
    if (!sameOrigin(tokenEndpoint, issuer) || !isSecureOrLoopback(new URL(tokenEndpoint))) {
      throw new McpUntrustedAuthorizationServerError(
        `The authorization server ${issuer} announces the token endpoint ${shown([tokenEndpoint])}, which is not on the issuer's origin; the client credentials are sent only there ` +
          '(pin an endpoint on another origin with tokenEndpoint)',
      );
    }
    return {
      resource: prm.resource as string,
      issuer,
      tokenEndpoint,
      authMethods: methods,
      user: userFlowMetadata(body, prm),
    };
  }
  // An issuer that publishes no metadata is usable when its token endpoint is pinned.
  if (pinned !== undefined) return { resource: prm.resource as string, issuer, tokenEndpoint: pinned, authMethods: [] };
  throw new McpOAuthClientError(`No metadata for the authorization server ${issuer}: tried ${tried.join(', ')}`);
}
