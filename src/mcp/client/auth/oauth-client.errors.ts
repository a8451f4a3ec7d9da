/**
 * Outbound OAuth failed: discovery of the server's metadata, or the token request. The message
 * names the URL and what the authorization server said, never a secret or a token.
 */
export class McpOAuthClientError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'McpOAuthClientError';
  }
}
