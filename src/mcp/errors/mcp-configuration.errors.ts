/** Thrown at boot when the module is configured in a way that cannot work; the message says how to fix it. */
export class McpConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpConfigurationError';
  }
}
