/**
 * Outbound OAuth failed: discovery of the server's metadata, or the token request. The message
 * names the URL and what the authorization server said, never a secret or a token.
 */
export class McpOAuthClientError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * Discovery led to an authorization server the configuration does not trust (not pinned with
 * `authorizationServer` nor listed in `trustedAuthorizationServers`), or to metadata that does
 * not belong to the trusted one: no credential was sent. The message names what to configure.
 */
export class McpUntrustedAuthorizationServerError extends McpOAuthClientError {}

/**
 * A 403 `insufficient_scope` challenge asked for more scopes than `clientCredentials` asks for
 * at once (64 scopes, 2048 characters in all, the configured `scope` included), or for a scope
 * RFC 6749 does not allow: the challenge is refused and no token is asked for with them.
 */
export class McpOAuthScopeLimitError extends McpOAuthClientError {}
