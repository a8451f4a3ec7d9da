/** MCP method names used by this package. */
export const McpMethod = {
  Initialize: 'initialize',
  Initialized: 'notifications/initialized',
  Ping: 'ping',
  ToolsList: 'tools/list',
  ToolsCall: 'tools/call',
  Cancelled: 'notifications/cancelled',
} as const;

/** HTTP header names of the Streamable HTTP transport. */
export const McpHeader = {
  SessionId: 'mcp-session-id',
  ProtocolVersion: 'mcp-protocol-version',
} as const;

/** A tool name as the specification allows: 1 to 128 characters of A-Z a-z 0-9 _ . - */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
