/** Token of the console's resolved options (`McpConsoleResolvedOptions`). */
export const MCP_CONSOLE_OPTIONS = Symbol('MCP_CONSOLE_OPTIONS');
