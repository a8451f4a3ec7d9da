// The documents OAuth discovery reads and what it makes of them, shared by the discovery through
// Protected Resource Metadata (oauth-discovery.ts) and the 2025-03-26 one at the server's origin.
import { jsonObject, oauthFetch } from './oauth-fetch';

/** What a client needs to know to ask for a token for one protected resource. */
export interface OAuthDiscovery {
  /**
   * The resource identifier (RFC 8707 `resource`), from the Protected Resource Metadata (for a
   * server without one, the server's URL).
   */
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

/** The user-flow fields of an authorization server's metadata `as`, with the resource scopes of `prm`. */
export function userFlowMetadata(as: Record<string, unknown>, prm: Record<string, unknown>): OAuthUserFlowMetadata {
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

/** One bounded GET of a JSON document: its status, and its body when it is a JSON object. */
export async function getJson(
  url: string,
  policy: OAuthDiscoveryPolicy,
  extraHeaders: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const { status, text } = await oauthFetch(
    url,
    { headers: { Accept: 'application/json', ...extraHeaders } },
    { timeoutMs: policy.timeoutMs, maxBytes: policy.maxBytes },
  );
  return { status, body: jsonObject(text) };
}

/** At most a few values a peer sent, each cut short, for an error message. */
export function shown(values: readonly string[]): string {
  const listed = values.slice(0, 5).map((value) => (value.length > 200 ? `${value.slice(0, 200)}...` : value));
  return `${listed.join(', ')}${values.length > 5 ? `, ... (${values.length} in all)` : ''}`;
}

/** RFC 9728 section 3.1: the well-known segment inserted before the resource's path, then at the root. */
