/** Injection token of the resolved options of `McpGatewayModule`. */
export const MCP_GATEWAY_OPTIONS = Symbol('MCP_GATEWAY_OPTIONS');
