export { McpModule } from './mcp.module';
export { McpTool } from './server/decorators/mcp-tool.decorator';
export { Toolset } from './server/toolset';
export type { ToolsetIdentity } from './server/toolset';
export {
  MCP_MODULE_OPTIONS,
  DEFAULT_MOUNT,
  DEFAULT_PATH,
  getMcpToolsetToken,
  getMcpOptionsToken,
  InjectMcpToolset,
} from './mcp.constants';
export type { McpModuleOptions, McpModuleExtras, McpServerInfoOptions, McpSessionOptions } from './interfaces/mcp-module-options.interface';
export type { McpPrincipal, McpAuthResult, McpAuthorizeFn, McpAuthorizer } from './interfaces/principal.interface';
export type { McpToolOptions, McpToolAnnotations, McpIcon, JsonSchema } from './interfaces/mcp-tool-options.interface';
export type { McpToolContext, McpContent, McpCallToolResult, McpToolReturn } from './interfaces/mcp-tool-context.interface';
export type { McpDeliveryContext, McpMessageHandler } from './interfaces/mcp-delivery.interface';
export type { McpResolvedOptions } from './mcp.options';
export { McpConfigurationError, McpRpcError, McpClientError, McpTimeoutError, McpTransportError, McpProtocolError, McpServerError } from './errors';
export { McpEvent, McpInboundSession, McpOutboundSession, MCP_ENTITIES } from './persistence/entities';
export type { McpEventDirection } from './persistence/entities';
export { MCP_MIGRATIONS, CreateMcpTables1764489600000 } from './persistence/migrations';
export * from './protocol';
