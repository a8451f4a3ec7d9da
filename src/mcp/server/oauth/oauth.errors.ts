import { McpInfrastructureError } from '../../errors/mcp-infrastructure.errors';

/**
 * The authorization server (its metadata, JWKS or introspection endpoint) could not be reached or
 * answered something unusable, so a token could be neither accepted nor refused: the endpoint
 * answers 503 with `Retry-After`, never 401 (the token may be fine). The message names the URL,
 * never the token.
 */
export class McpAuthorizationServerError extends McpInfrastructureError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'McpAuthorizationServerError';
  }
}
