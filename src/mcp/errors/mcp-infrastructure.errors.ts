/**
 * A failure around a tool rather than in it (resolving a request-scoped provider, a database
 * outage met by the module): it propagates as an HTTP 5xx instead of becoming an `isError` result.
 */
export class McpInfrastructureError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'McpInfrastructureError';
  }
}
