import type { McpClientAuth } from './mcp-client-auth.interface';

/**
 * A fixed bearer token (what `bearerToken` does): sent on every request, never refreshed, so a
 * 401 is not retried. Never logged or stored.
 * @example `search: { url: 'https://search.example.com/mcp', auth: staticToken(process.env.SEARCH_TOKEN!) }`
 */
export function staticToken(token: string): McpClientAuth {
  if (typeof token !== 'string' || token === '') throw new TypeError('staticToken(token) needs a non-empty string');
  return {
    getToken: () => Promise.resolve(token),
    invalidate: () => Promise.resolve(),
  };
}
