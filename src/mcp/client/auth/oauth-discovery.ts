import { parseBearerChallenge } from './bearer-challenge.parser';
import type { McpAuthChallenge } from './mcp-client-auth.interface';
import { isSecureOrLoopback, sameOrigin, sameUrl } from './authorization-server-trust';
import { McpOAuthClientError, McpUntrustedAuthorizationServerError } from './oauth-client.errors';
import { jsonObject, oauthFetch } from './oauth-fetch';

/** What a client needs to know to ask for a token for one protected resource. */
export interface OAuthDiscovery {
  /** The resource identifier (RFC 8707 `resource`), from the Protected Resource Metadata. */
  resource: string;
  issuer: string;
  tokenEndpoint: string;
  /** `token_endpoint_auth_methods_supported`, empty when not announced. */
  authMethods: string[];
  /** What the authorization code flow also needs, read from the same documents. */
  user?: OAuthUserFlowMetadata;
}

/** The parts of the metadata the authorization code flow reads. */
export interface OAuthUserFlowMetadata {
  /** The `authorization_endpoint`, when announced. */
  authorizationEndpoint: string | null;
  /** The `registration_endpoint` (RFC 7591), when announced. */
  registrationEndpoint: string | null;
  /** `code_challenge_methods_supported`, empty when not announced. */
  pkceMethods: string[];
  /** RFC 9207 `authorization_response_iss_parameter_supported`: its authorization responses carry `iss`. */
  issParameterSupported: boolean;
  /** `client_id_metadata_document_supported`. */
  clientIdMetadataDocuments: boolean;
  /** The Protected Resource Metadata's `scopes_supported`, empty when not announced. */
  resourceScopes: string[];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function userFlowMetadata(as: Record<string, unknown>, prm: Record<string, unknown>): OAuthUserFlowMetadata {
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
  return {
    authorizationEndpoint: text(as.authorization_endpoint),
    registrationEndpoint: text(as.registration_endpoint),
    pkceMethods: strings(as.code_challenge_methods_supported),
    issParameterSupported: as.authorization_response_iss_parameter_supported === true,
    clientIdMetadataDocuments: as.client_id_metadata_document_supported === true,
    resourceScopes: strings(prm.scopes_supported),
  };
}

/** How discovery reads: the deadline of each request, the largest document, and the issuers trusted with the credentials. */
export interface OAuthDiscoveryPolicy {
  timeoutMs: number;
  maxBytes: number;
  /** Issuer identifiers the client credentials may go to (never empty). */
  trustedIssuers: readonly string[];
  /**
   * The token endpoint the configuration pins (with a single trusted issuer): used as it is, on
   * whatever origin; the issuer's metadata may announce it or none, never another.
   */
  tokenEndpoint?: string;
}

async function getJson(
  url: string,
  policy: OAuthDiscoveryPolicy,
): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const { status, text } = await oauthFetch(
    url,
    { headers: { Accept: 'application/json' } },
    { timeoutMs: policy.timeoutMs, maxBytes: policy.maxBytes },
  );
  return { status, body: jsonObject(text) };
}

/** At most a few values a peer sent, each cut short, for an error message. */
function shown(values: readonly string[]): string {
  const listed = values.slice(0, 5).map((value) => (value.length > 200 ? `${value.slice(0, 200)}...` : value));
  return `${listed.join(', ')}${values.length > 5 ? `, ... (${values.length} in all)` : ''}`;
}

/** RFC 9728 section 3.1: the well-known segment inserted before the resource's path, then at the root. */
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
 * metadata of the first of its authorization servers the policy trusts. The credentials can only
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
  for (const url of metadataUrl ? [metadataUrl] : protectedResourceMetadataUrls(endpoint)) {
    const { status, body } = await getJson(url, policy);
    if (status === 200 && body && typeof body.resource === 'string') {
      prm = body;
      break;
    }
    tried.push(`${url} (HTTP ${status})`);
  }
  if (!prm && !metadataUrl) {
    const challenged = await challengedMetadataUrl(endpoint, policy);
    if (challenged) return discoverOAuth(endpoint, challenged, policy);
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
