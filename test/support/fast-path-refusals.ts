import { initializeRequest, post } from './mcp-wire';

/**
 * The tokens the refusal views rely on the authorizer for: `throwing` makes it throw (an error
 * whose text holds the token), `later` is admitted through a promise; any token it does not know
 * is refused.
 */
export const FAST_PATH_TOKENS = { throwing: 'token-boom', later: 'token-later' };

/**
 * What a mount answers to the ways a POST can be refused (a wrong token, none, a throwing
 * authorizer, an async one that admits, a bad Origin, malformed JSON, a body over 1024 bytes, a
 * wrong content type), as a client sees each: status, challenge, JSON-RPC error code, and
 * whether the throwing authorizer's token leaked into the answer. The fast path and the Nest
 * route must give the same views.
 */
export async function refusalViews(url: string) {
  const replies = [
    await post(url, initializeRequest(), { token: 'token-mallory' }),
    await post(url, initializeRequest(), { token: null }),
    await post(url, initializeRequest(), { token: FAST_PATH_TOKENS.throwing }),
    await post(url, initializeRequest(), { token: FAST_PATH_TOKENS.later }),
    await post(url, initializeRequest(), { headers: { Origin: 'https://evil.example' } }),
    await post(url, '{"jsonrpc": "2.0", "id": 1,'),
    await post(url, { jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(4096) } }),
    await post(url, initializeRequest(), { headers: { 'Content-Type': 'text/plain' } }),
  ];
  return replies.map((reply) => ({
    status: reply.status,
    challenge: reply.headers.get('www-authenticate'),
    error: reply.json?.error?.code,
    leaked: reply.text.includes(FAST_PATH_TOKENS.throwing),
  }));
}

/** The statuses of `refusalViews`, in its order. */
export const REFUSAL_STATUSES = [401, 401, 500, 200, 403, 400, 413, 415];
