/** Injection token of the resolved client options. */
export const MCP_CLIENT_OPTIONS = 'MCP_CLIENT_OPTIONS';

/**
 * Injection token of the transport factories in use, a `ReadonlyMap<string, McpTransportFactory>`
 * by transport name: the built-in `stdio`, `http` and `toolset`, and those registered with
 * `McpClientModule.forRoot({ transports })`.
 */
export const MCP_TRANSPORT_FACTORIES = 'MCP_TRANSPORT_FACTORIES';

/** Metadata key of `@McpSamplingHandler`, `@McpElicitationHandler` and `@McpRootsHandler`. */
export const MCP_CLIENT_HANDLER_METADATA = 'mcp:client-handler';

/** Metadata key of the options of `@McpSamplingHandler` (tool support). */
export const MCP_SAMPLING_HANDLER_OPTIONS_METADATA = 'mcp:sampling-handler-options';

/** Injection token of the client's `McpRetentionService` (the pruner of its `retention` option). */
export const MCP_CLIENT_RETENTION = 'MCP_CLIENT_RETENTION';

/** Injection token of the client's `McpTokenStore` (Redis with the Bull queue, else memory). */
export const MCP_CLIENT_TOKEN_STORE = 'MCP_CLIENT_TOKEN_STORE';
