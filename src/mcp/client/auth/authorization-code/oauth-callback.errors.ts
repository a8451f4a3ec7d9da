import { McpOAuthClientError } from '../oauth-client.errors';

/**
 * The callback of an authorization cannot complete it: no or an unknown, used or expired
 * `state`, the authorization server's refusal, an issuer mix-up (RFC 9207), or a refused code
 * exchange. The callback route answers it with HTTP 400 and this message.
 */
export class McpOAuthCallbackError extends McpOAuthClientError {}
