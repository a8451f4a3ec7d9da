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

/** Why a user must authorize (again): no grant yet, the grant was revoked or expired, or it lacks a scope. */
export type McpAuthorizationRequiredReason = 'none' | 'revoked' | 'insufficient_scope';

/**
 * A call to a server whose `auth` is `authorizationCode({...})` needs the user to authorize the
 * client first: there is no grant for this server and scope key, its refresh token was refused
 * (revoked or expired), or the server asked for a scope the grant lacks. Send the user to
 * `McpOAuthService.authorizationUrl(error.server, error.scopeKey)`, then call again. It arrives
 * as the `cause` of the call's `McpTransportError`; `McpAuthorizationRequiredError.of(error)`
 * finds it.
 */
export class McpAuthorizationRequiredError extends McpOAuthClientError {
  constructor(
    /** The configured server name. */
    readonly server: string,
    /** The scope key (user) of the call. */
    readonly scopeKey: string,
    /** Why authorization is needed. */
    readonly reason: McpAuthorizationRequiredReason,
    message?: string,
  ) {
    super(
      message ??
        `MCP server "${server}" needs the user (scope key ${JSON.stringify(scopeKey)}) to authorize the client` +
          (reason === 'revoked'
            ? ': the authorization server refused the refresh token (revoked or expired)'
            : reason === 'insufficient_scope'
              ? ': the server asks for more scope than was granted'
              : ': no grant yet') +
          '; send the user to McpOAuthService.authorizationUrl(server, scopeKey)',
    );
  }

  /** The `McpAuthorizationRequiredError` an error is or carries as its `cause`, or null. */
  static of(error: unknown): McpAuthorizationRequiredError | null {
    for (let current = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth++)
      if (current instanceof McpAuthorizationRequiredError) return current;
    return null;
  }
}
