/** One MCP log level (RFC 5424 names). */
export type McpLogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/** MCP log levels, least to most severe (RFC 5424 names). */
export const MCP_LOG_LEVELS: readonly McpLogLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];
