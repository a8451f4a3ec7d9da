import { parseBearerChallenge } from './bearer-challenge.parser';
import { McpOAuthClientError } from './oauth-client.errors';

/** What a client needs to know to ask for a token for one protected resource. */
export interface OAuthDiscovery {
  /** The resource identifier (RFC 8707 `resource`), from the Protected Resource Metadata. */
  resource: string;
  issuer: string;
  tokenEndpoint: string;
  /** `token_endpoint_auth_methods_supported`, empty when not announced. */
  authMethods: string[];
}

async function getJson(url: string, timeoutMs: number): Promise<{ status: number; body: Record<string, unknown> | null }> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  } catch (error) {
    throw new McpOAuthClientError(`${url} could not be reached: ${(error as Error).message}`, { cause: error });
  }
  const text = await response.text();
  try {
    const body: unknown = JSON.parse(text);
    return { status: response.status, body: typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : null };
  } catch {
    return { status: response.status, body: null };
  }
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
  const urls = [`${url.origin}/.well-known/oauth-authorization-server${path}`, `${url.origin}/.well-known/openid-configuration${path}`];
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
async function challengedMetadataUrl(endpoint: URL, timeoutMs: number): Promise<string | null> {
  try {
    const headers = { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' };
    const response = await fetch(endpoint, { method: 'POST', headers, body: PROBE, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
    await response.body?.cancel().catch(() => undefined);
    return response.status === 401 ? parseBearerChallenge(401, response.headers.get('www-authenticate')).resourceMetadata : null;
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
  return parsed.origin === endpoint.origin && (endpoint.pathname === base || endpoint.pathname.startsWith(`${base}/`) || base === '');
}

/**
 * Finds the token endpoint of an MCP server: its Protected Resource Metadata (at
 * `metadataUrl`, from a `resource_metadata` challenge, else the well-known URLs, else the
 * `resource_metadata` of the 401 a GET without a token gets), then the metadata of its first
 * (or the pinned) authorization server.
 * @throws McpOAuthClientError saying which URLs were tried
 */
export async function discoverOAuth(endpoint: URL, metadataUrl: string | null, timeoutMs: number, pinnedIssuer?: string): Promise<OAuthDiscovery> {
  const tried: string[] = [];
  let prm: Record<string, unknown> | null = null;
  for (const url of metadataUrl ? [metadataUrl] : protectedResourceMetadataUrls(endpoint)) {
    const { status, body } = await getJson(url, timeoutMs);
    if (status === 200 && body && typeof body.resource === 'string') {
      prm = body;
      break;
    }
    tried.push(`${url} (HTTP ${status})`);
  }
  if (!prm && !metadataUrl) {
    const challenged = await challengedMetadataUrl(endpoint, timeoutMs);
    if (challenged) return discoverOAuth(endpoint, challenged, timeoutMs, pinnedIssuer);
  }
  if (!prm) throw new McpOAuthClientError(`No Protected Resource Metadata for ${endpoint.origin}${endpoint.pathname}: tried ${tried.join(', ')}`);
  const where = `The Protected Resource Metadata of ${endpoint.origin}${endpoint.pathname}`;
  if (!resourceCovers(prm.resource as string, endpoint)) throw new McpOAuthClientError(`${where} names the resource ${JSON.stringify(prm.resource)}, which is not this endpoint`);
  const servers = Array.isArray(prm.authorization_servers) ? prm.authorization_servers.filter((s): s is string => typeof s === 'string') : [];
  if (servers.length === 0) throw new McpOAuthClientError(`${where} names no authorization_servers`);
  if (pinnedIssuer !== undefined && !servers.includes(pinnedIssuer)) {
    throw new McpOAuthClientError(`${where} does not name the authorization server ${pinnedIssuer} (it names ${servers.join(', ')})`);
  }
  const issuer = pinnedIssuer ?? servers[0];
  for (const url of authorizationServerMetadataUrls(issuer)) {
    const { status, body } = await getJson(url, timeoutMs);
    if (status !== 200 || !body) {
      tried.push(`${url} (HTTP ${status})`);
      continue;
    }
    if (body.issuer !== issuer) throw new McpOAuthClientError(`The metadata at ${url} names the issuer ${JSON.stringify(body.issuer)}, not ${issuer}`);
    if (typeof body.token_endpoint !== 'string') throw new McpOAuthClientError(`The authorization server ${issuer} announces no token_endpoint`);
    const methods = Array.isArray(body.token_endpoint_auth_methods_supported) ? body.token_endpoint_auth_methods_supported.filter((m): m is string => typeof m === 'string') : [];
    return { resource: prm.resource as string, issuer, tokenEndpoint: body.token_endpoint, authMethods: methods };
  }
  throw new McpOAuthClientError(`No metadata for the authorization server ${issuer}: tried ${tried.join(', ')}`);
}
