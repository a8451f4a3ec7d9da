import { boundedFetch, type BoundedFetchLimits } from '../../bounded-fetch';
import { McpAuthorizationServerError } from './oauth.errors';

/** The fields of RFC 8414 / OpenID Connect discovery metadata the verifiers read. */
export interface AuthorizationServerMetadata {
  issuer: string;
  jwks_uri?: string;
  introspection_endpoint?: string;
  [field: string]: unknown;
}

/**
 * The discovery URLs of an issuer, in the order MCP clients try them: RFC 8414 with the well-known
 * segment inserted before the issuer's path, OpenID Connect discovery the same way, then OpenID
 * Connect discovery appended to the issuer.
 */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  const urls = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
  ];
  if (path) urls.push(`${url.origin}${path}/.well-known/openid-configuration`);
  return urls;
}

/** The bounds of each request a verifier makes: its deadline (body included), and the largest body read. */
export type AuthorizationServerLimits = BoundedFetchLimits;

/** A verifier's `maxResponseBytes` when it gives none: far more than any metadata, JWKS or introspection answer. */
export const DEFAULT_MAX_RESPONSE_BYTES = 1_048_576;

/**
 * One request to the authorization server within `limits`: no redirect followed, the deadline
 * spans the body, at most `maxBytes` read. A network failure, a redirect, a body too large or
 * too slow, or a 5xx becomes `McpAuthorizationServerError` (a 503, never a crash); a body that
 * is not JSON is `undefined`.
 * @throws McpAuthorizationServerError
 */
export async function fetchJson(
  url: string,
  init: RequestInit,
  limits: AuthorizationServerLimits,
): Promise<{ status: number; body: unknown }> {
  const { status, text } = await boundedFetch(url, init, limits, {
    label: `The authorization server at ${url}`,
    limitName: 'maxResponseBytes',
    error: (message, cause) => new McpAuthorizationServerError(message, cause === undefined ? undefined : { cause }),
  });
  if (status >= 500)
    throw new McpAuthorizationServerError(`The authorization server at ${url} answered HTTP ${status}`);
  try {
    return { status, body: text === '' ? undefined : JSON.parse(text) };
  } catch {
    return { status, body: undefined };
  }
}

/**
 * Fetches an issuer's metadata (RFC 8414, then OpenID Connect discovery) and checks that it
 * describes that issuer (RFC 8414 section 3.3: a document for another issuer is refused). Each
 * request is bounded by `limits`.
 * @throws McpAuthorizationServerError when no discovery URL serves a usable document
 */
export async function discoverAuthorizationServer(
  issuer: string,
  limits: AuthorizationServerLimits,
): Promise<AuthorizationServerMetadata> {
  const tried: string[] = [];
  for (const url of metadataUrls(issuer)) {
    const { status, body } = await fetchJson(url, { headers: { Accept: 'application/json' } }, limits);
    if (status !== 200 || typeof body !== 'object' || body === null) {
      tried.push(`${url} (HTTP ${status})`);
      continue;
    }
    const metadata = body as AuthorizationServerMetadata;
    if (metadata.issuer !== issuer) {
      throw new McpAuthorizationServerError(
        `The metadata at ${url} names the issuer ${JSON.stringify(metadata.issuer)}, not ${issuer}`,
      );
    }
    return metadata;
  }
  throw new McpAuthorizationServerError(`No authorization server metadata for ${issuer}: tried ${tried.join(', ')}`);
}

/**
 * A value computed once and shared; a failure is not kept, so the next call tries again (an
 * authorization server that was down at the first request is found once it is back).
 */
export class OnceWhenDone<T> {
  private pending?: Promise<T>;

  constructor(private readonly compute: () => Promise<T>) {}

  /** The value, computing it if no computation succeeded or is under way. */
  get(): Promise<T> {
    this.pending ??= this.compute().catch((error: unknown) => {
      this.pending = undefined;
      throw error;
    });
    return this.pending;
  }
}
