import { ForbiddenException, UnauthorizedException } from '@nestjs/common';
import type { JsonRpcId } from '../../protocol/jsonrpc';
import type { McpResolvedOAuthOptions } from '../config/mcp-oauth.options';

/** Why a request was refused: no usable token at all, or a token the authorizer rejected. */
export type McpBearerRefusal = 'missing' | 'invalid';

/** An RFC 6750 auth-param value: a quoted string (our values never hold `"` or `\`, escaped anyway). */
function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The `WWW-Authenticate` value of a 401. Without `oauth` it stays the bare `Bearer`. With it, the
 * challenge names the metadata document (RFC 9728 section 5.1) and the scopes the mount needs;
 * a rejected token adds `error="invalid_token"` (RFC 6750 section 3.1), a missing one no error.
 */
export function unauthorizedChallenge(oauth: McpResolvedOAuthOptions | undefined, refusal: McpBearerRefusal): string {
  if (!oauth) return 'Bearer';
  const params: string[] = [];
  if (refusal === 'invalid')
    params.push(
      `error="invalid_token"`,
      `error_description="The access token is invalid, expired or not issued for this resource"`,
    );
  params.push(`resource_metadata=${quoted(oauth.metadataUrl)}`);
  if (oauth.requiredScopes.length > 0) params.push(`scope=${quoted(oauth.requiredScopes.join(' '))}`);
  return `Bearer ${params.join(', ')}`;
}

/** The `WWW-Authenticate` value of a 403 for a token that lacks scopes (RFC 6750 section 3.1). */
export function insufficientScopeChallenge(
  oauth: McpResolvedOAuthOptions | undefined,
  needed: readonly string[],
): string {
  const metadata = oauth ? `, resource_metadata=${quoted(oauth.metadataUrl)}` : '';
  return `Bearer error="insufficient_scope", scope=${quoted(needed.join(' '))}${metadata}`;
}

/** The bearer guard's 401: the endpoint's exception filter sends `challenge` as `WWW-Authenticate`. */
export class McpBearerChallengeException extends UnauthorizedException {
  constructor(readonly challenge: string) {
    super();
  }
}

/**
 * The bearer guard's 403 for missing scopes: `challenge` as `WWW-Authenticate`, and a JSON-RPC
 * error body answering the request's `requestId`.
 */
export class McpInsufficientScopeException extends ForbiddenException {
  constructor(
    readonly challenge: string,
    readonly needed: readonly string[],
    readonly requestId: JsonRpcId | null = null,
  ) {
    super(`Insufficient scope: this request needs the scopes ${needed.join(' ')}`);
  }
}

/** The JSON-RPC id a refusal's body answers: the refused request's, when the guard knew it. */
export function refusedRequestId(exception: unknown): JsonRpcId | null {
  return exception instanceof McpInsufficientScopeException ? exception.requestId : null;
}

/** The `WWW-Authenticate` value an auth refusal carries: its own challenge, or the bare `Bearer`. */
export function challengeOf(exception: unknown): string | undefined {
  if (exception instanceof McpBearerChallengeException || exception instanceof McpInsufficientScopeException)
    return exception.challenge;
  return exception instanceof UnauthorizedException ? 'Bearer' : undefined;
}
