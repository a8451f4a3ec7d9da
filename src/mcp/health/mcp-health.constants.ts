/** Injection token of the resolved `McpHealthModule` options. */
export const MCP_HEALTH_OPTIONS = 'MCP_HEALTH_OPTIONS';

/** Injection token of terminus's `HealthIndicatorService` (loaded only when the health module is used). */
export const MCP_HEALTH_INDICATOR_SERVICE = 'MCP_HEALTH_INDICATOR_SERVICE';
