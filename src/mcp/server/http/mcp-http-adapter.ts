import type { ServerResponse } from 'node:http';

/** The part of a Fastify reply the endpoint uses; Express's response has neither member. */
interface FastifyReplyLike {
  raw: ServerResponse;
  hijack(): unknown;
}

function isFastifyReply(response: object): response is FastifyReplyLike {
  return 'raw' in response && typeof (response as Partial<FastifyReplyLike>).hijack === 'function';
}

/**
 * The Node response under the response object of either HTTP adapter, which is what the endpoint
 * writes to: Express's `Response` is a `ServerResponse` itself; a Fastify reply wraps one in
 * `raw` and is hijacked first, so Fastify neither sends a reply of its own when the handler
 * returns nor runs its serializers over what the endpoint wrote (SSE streams in particular).
 */
export function nodeResponseOf(response: object): ServerResponse {
  if (!isFastifyReply(response)) return response as ServerResponse;
  response.hijack();
  return response.raw;
}
