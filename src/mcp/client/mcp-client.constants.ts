/** Injection token of the resolved client options of the mount that carries them. */
export const MCP_CLIENT_OPTIONS = 'MCP_CLIENT_OPTIONS';

/** Metadata key of `@McpSamplingHandler`, `@McpElicitationHandler` and `@McpRootsHandler`. */
export const MCP_CLIENT_HANDLER_METADATA = 'mcp:client-handler';
