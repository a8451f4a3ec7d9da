import { basicCredentials } from '../client-credentials.auth';
import { McpOAuthClientError } from '../oauth-client.errors';
import type { OAuthDiscovery } from '../oauth-discovery';
import { jsonObject, oauthFetch, type OAuthFetchBounds } from '../oauth-fetch';

/** Assumed lifetime when the token response has no `expires_in`. */
const DEFAULT_LIFETIME_SEC = 300;

/** What the token endpoint issued. */
export interface IssuedTokens {
  accessToken: string;
  /** Null when none was issued (a refresh keeps the old one then). */
  refreshToken: string | null;
  expiresInSec: number;
  /** The granted scope, when the response states it. */
  scope: string | null;
}

/** How the client authenticates at the token endpoint: a public client sends its id, a confidential one its secret too. */
export interface TokenEndpointClient {
  clientId: string;
  clientSecret?: string;
}

/** The token endpoint refused the request; `error` is its OAuth error code (e.g. `invalid_grant`). */
export class TokenEndpointRefusal extends McpOAuthClientError {
  constructor(
    message: string,
    readonly error: string | null,
  ) {
    super(message);
  }
}

/**
 * One grant request (`authorization_code` or `refresh_token`) to the discovered token endpoint,
 * within `bounds`. Only the error fields of a refusal reach the message, never a token.
 * @throws TokenEndpointRefusal when the endpoint refuses, McpOAuthClientError when it cannot be reached or answers nonsense
 */
export async function requestTokens(
  discovery: OAuthDiscovery,
  client: TokenEndpointClient,
  grant: Record<string, string>,
  bounds: OAuthFetchBounds,
): Promise<IssuedTokens> {
  const form = new URLSearchParams({ ...grant, resource: discovery.resource });
  const headers: Record<string, string> = {
    'Content-Type': 'application/x-www-form-urlencoded',
    Accept: 'application/json',
  };
  const methods = discovery.authMethods;
  if (client.clientSecret === undefined) {
    form.set('client_id', client.clientId);
  } else if (methods.length > 0 && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')) {
    form.set('client_id', client.clientId);
    form.set('client_secret', client.clientSecret);
  } else {
    headers.Authorization = basicCredentials(client.clientId, client.clientSecret);
  }
  const where = `The token endpoint ${discovery.tokenEndpoint}`;
  const response = await oauthFetch(
    discovery.tokenEndpoint,
    { method: 'POST', headers, body: form.toString() },
    bounds,
    where,
  );
  const body = jsonObject(response.text) ?? {};
  const ok = response.status >= 200 && response.status < 300;
  if (!ok || typeof body.access_token !== 'string' || body.access_token === '') {
    const error = typeof body.error === 'string' ? body.error.slice(0, 100) : null;
    const description = typeof body.error_description === 'string' ? ` (${body.error_description.slice(0, 300)})` : '';
    throw new TokenEndpointRefusal(
      `${where} refused the ${grant.grant_type} grant of client "${client.clientId}" (HTTP ${response.status})${error ? `: ${error}${description}` : ''}`,
      error,
    );
  }
  if (typeof body.token_type === 'string' && body.token_type.toLowerCase() !== 'bearer')
    throw new McpOAuthClientError(
      `${where} issued a token of type ${JSON.stringify(body.token_type.slice(0, 50))}; only Bearer tokens are supported`,
    );
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === 'string' && body.refresh_token !== '' ? body.refresh_token : null,
    expiresInSec: typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_SEC,
    scope: typeof body.scope === 'string' ? body.scope : null,
  };
}
