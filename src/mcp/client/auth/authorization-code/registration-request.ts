import { isLoopbackUrl, sameOrigin } from '../authorization-server-trust';
import { McpOAuthClientError, McpUntrustedAuthorizationServerError } from '../oauth-client.errors';
import { jsonObject, oauthFetch, type OAuthFetchBounds } from '../oauth-fetch';

/** What the registration endpoint issued (RFC 7591 section 3.2.1). */
export interface RegisteredClient {
  clientId: string;
  /** Null for a public client (the one asked for); some servers issue a secret anyway. */
  clientSecret: string | null;
  /** When the secret expires; null when it does not (`client_secret_expires_at` 0 or absent). */
  secretExpiresAt: Date | null;
}

/**
 * The client metadata `authorizationCode` registers and publishes (a Client ID Metadata
 * Document carries the same, with `client_id`): a public client of the authorization code flow
 * with PKCE and refresh tokens, sending the user back to `redirectUri`. Its `application_type`
 * (OpenID Connect Registration, which the MCP specification asks for) is `native` for a loopback
 * redirect URI (an app on the user's own machine) and `web` otherwise.
 */
export function publicClientMetadata(redirectUri: string, clientName: string): Record<string, unknown> {
  return {
    client_name: clientName,
    application_type: isLoopbackUrl(new URL(redirectUri)) ? 'native' : 'web',
    redirect_uris: [redirectUri],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/**
 * Registers a client at `endpoint`, the registration endpoint the trusted `issuer` announces
 * (RFC 7591), within `bounds`. The endpoint must be on the issuer's origin, as the token
 * endpoint must. Only the error fields of a refusal reach the message, never a secret.
 * @throws McpUntrustedAuthorizationServerError for an endpoint elsewhere; McpOAuthClientError when it refuses, cannot be reached or answers nonsense
 */
export async function registerClient(
  issuer: string,
  endpoint: string,
  metadata: Record<string, unknown>,
  bounds: OAuthFetchBounds,
): Promise<RegisteredClient> {
  // The issuer is trusted, hence https (or loopback): its origin is too.
  if (!sameOrigin(endpoint, issuer))
    throw new McpUntrustedAuthorizationServerError(
      `The authorization server ${issuer} announces the registration endpoint ${JSON.stringify(endpoint.slice(0, 200))}, which is not on the issuer's origin; the client registers only there`,
    );
  const where = `The registration endpoint ${endpoint}`;
  const response = await oauthFetch(
    endpoint,
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(metadata),
    },
    bounds,
    where,
  );
  const body = jsonObject(response.text) ?? {};
  const text = (value: unknown): string => (typeof value === 'string' ? value : '');
  const clientId = text(body.client_id);
  if (response.status < 200 || response.status >= 300 || clientId === '') {
    const error = text(body.error) && `: ${text(body.error).slice(0, 100)}`;
    const description = text(body.error_description) && ` (${text(body.error_description).slice(0, 300)})`;
    throw new McpOAuthClientError(
      `${where} did not register the client (HTTP ${response.status})${error}${description}`,
    );
  }
  const secret = text(body.client_secret) || null;
  const expires = Number(body.client_secret_expires_at);
  return {
    clientId,
    clientSecret: secret,
    // RFC 7591: 0 means the secret does not expire; absent, too.
    secretExpiresAt: secret !== null && expires > 0 ? new Date(expires * 1000) : null,
  };
}
