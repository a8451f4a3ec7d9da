import { boundedFetch, type BoundedFetchLimits, type BoundedReply } from '../../bounded-fetch';
import { McpOAuthClientError } from './oauth-client.errors';

export { jsonObject } from '../../bounded-fetch';

/** What one request to a discovery or token endpoint gave. */
export type OAuthReply = BoundedReply;

/** The bounds of one request: its whole deadline (body included), and the largest body read. */
export type OAuthFetchBounds = BoundedFetchLimits;

/**
 * One request to a metadata or token endpoint, within `bounds` (see `boundedFetch`: no redirect
 * followed, the deadline spans the body, at most `maxBytes` read).
 * @param label how messages name the URL, e.g. `The token endpoint https://...`
 * @throws McpOAuthClientError naming the URL when it cannot be reached, redirects, is too slow or answers too much
 */
export function oauthFetch(
  url: string,
  init: RequestInit,
  bounds: OAuthFetchBounds,
  label: string = url,
): Promise<OAuthReply> {
  return boundedFetch(url, init, bounds, {
    label,
    limitName: 'maxResponseBytes',
    error: (message, cause) => new McpOAuthClientError(message, cause === undefined ? undefined : { cause }),
  });
}
