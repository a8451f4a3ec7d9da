/** MCP log levels, least to most severe (RFC 5424 names). */
export const MCP_LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;

/** One MCP log level. */
export type McpLogLevel = (typeof MCP_LOG_LEVELS)[number];
