import { McpOAuthClientError } from '../oauth-client.errors';
import { jsonObject, oauthFetch, type OAuthFetchBounds } from '../oauth-fetch';

/** How the client proves itself at the token endpoint: a public client sends only its id. */
export interface TokenClient {
  clientId: string;
  clientSecret?: string;
  method: 'none' | 'client_secret_basic' | 'client_secret_post';
}

/** What a token endpoint issued. */
export interface IssuedTokens {
  accessToken: string;
  /** Null when none was issued (a refresh keeps the old one then). */
  refreshToken: string | null;
  /** Lifetime of the access token in seconds. */
  expiresIn: number;
  /** The granted scope, when the response says it. */
  scope: string | null;
}

/** The token endpoint refused the grant itself (`invalid_grant`): the user must authorize again. */
export class InvalidGrantError extends McpOAuthClientError {}

/** Assumed lifetime when the token response has no `expires_in`. */
const DEFAULT_LIFETIME_SEC = 300;

function basic(clientId: string, secret: string): string {
  // RFC 6749 section 2.3.1: both parts form-encoded before base64.
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

/**
 * One token request (authorization code or refresh) to `tokenEndpoint`. Only the error fields of
 * a refusal reach a message, never a token.
 * @throws InvalidGrantError when the endpoint answers `invalid_grant`
 * @throws McpOAuthClientError for any other refusal or a malformed answer
 */
export async function requestTokens(
  tokenEndpoint: string,
  form: URLSearchParams,
  client: TokenClient,
  bounds: OAuthFetchBounds,
): Promise<IssuedTokens> {
  const headers: Record<string, string> = {
    'Content-Type': 'application/x-www-form-urlencoded',
    Accept: 'application/json',
  };
  if (client.method === 'client_secret_basic') headers.Authorization = basic(client.clientId, client.clientSecret ?? '');
  else form.set('client_id', client.clientId);
  if (client.method === 'client_secret_post') form.set('client_secret', client.clientSecret ?? '');
  const where = `The token endpoint ${tokenEndpoint}`;
  const response = await oauthFetch(tokenEndpoint, { method: 'POST', headers, body: form.toString() }, bounds, where);
  const body = jsonObject(response.text) ?? {};
  const ok = response.status >= 200 && response.status < 300;
  if (!ok || typeof body.access_token !== 'string' || body.access_token === '') {
    const error = typeof body.error === 'string' ? body.error.slice(0, 100) : null;
    const description = typeof body.error_description === 'string' ? ` (${body.error_description.slice(0, 300)})` : '';
    const message = `${where} refused the ${form.get('grant_type')} grant of client "${client.clientId}" (HTTP ${response.status})${error ? `: ${error}${description}` : ''}`;
    throw error === 'invalid_grant' ? new InvalidGrantError(message) : new McpOAuthClientError(message);
  }
  if (typeof body.token_type === 'string' && body.token_type.toLowerCase() !== 'bearer') {
    throw new McpOAuthClientError(
      `${where} issued a token of type ${JSON.stringify(body.token_type)}; only Bearer tokens are supported`,
    );
  }
  return {
    accessToken: body.access_token,
    refreshToken: typeof body.refresh_token === 'string' && body.refresh_token !== '' ? body.refresh_token : null,
    expiresIn: typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_LIFETIME_SEC,
    scope: typeof body.scope === 'string' ? body.scope : null,
  };
}
