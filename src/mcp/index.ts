export { McpModule } from './mcp.module';
export { McpTool } from './server/decorators/mcp-tool.decorator';
export { McpResource } from './server/decorators/mcp-resource.decorator';
export { McpResourceTemplate } from './server/decorators/mcp-resource-template.decorator';
export { McpPrompt } from './server/decorators/mcp-prompt.decorator';
export { McpResourceNotifier } from './server/features/mcp-resource-notifier';
export { getMcpResourceNotifierToken, InjectMcpResourceNotifier } from './mcp.constants';
export type {
  McpResourceOptions,
  McpResourceTemplateOptions,
  McpResourceCommonOptions,
  McpResourceAnnotations,
  McpResourceRequest,
  McpResourceContents,
  McpTextResourceContents,
  McpBlobResourceContents,
  McpReadResourceResult,
  McpResourceReturn,
} from './interfaces/mcp-resource-options.interface';
export type { McpPromptOptions, McpPromptArgument, McpPromptMessage, McpGetPromptResult, McpPromptReturn } from './interfaces/mcp-prompt-options.interface';
export type { McpCompleter, McpCompleters, McpCompletionContext, McpCompletionList } from './interfaces/mcp-completion.interface';
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
export type {
  McpModuleOptions,
  McpModuleExtras,
  McpServerInfoOptions,
  McpSessionOptions,
  McpStatelessOptions,
  McpCacheOptions,
  McpCacheHint,
} from './server/interfaces/mcp-module-options.interface';
export type { McpPrincipal, McpAuthResult, McpAuthorizeFn, McpAuthorizer } from './interfaces/principal.interface';
export type { McpToolOptions, McpToolAnnotations, McpIcon, JsonSchema } from './interfaces/mcp-tool-options.interface';
export type { McpToolContext, McpContent, McpCallToolResult, McpToolReturn, McpInputRequestOptions } from './interfaces/mcp-tool-context.interface';
export type { McpDeliveryContext, McpMessageHandler } from './interfaces/mcp-delivery.interface';
export type { McpLogLevel } from './protocol/log-levels';
export { MCP_SESSION_NOTIFIER } from './interfaces/mcp-session-notifier.interface';
export type { McpSessionNotifier } from './interfaces/mcp-session-notifier.interface';
export { McpClientRequestError, McpClientRequestTimeoutError } from './errors/mcp-client-request.errors';
export type { McpStreamOptions } from './server/http/mcp-stream.options';
export type { McpPubSubOptions } from './server/pubsub/mcp-pubsub.interface';
export type { McpResolvedOptions } from './server/mcp.options';
export {
  McpConfigurationError,
  McpRpcError,
  McpClientError,
  McpTimeoutError,
  McpTransportError,
  McpProtocolError,
  McpServerError,
  McpCapabilityError,
  McpUnknownServerError,
  McpToolNotFoundError,
  McpAmbiguousToolError,
  McpInvalidToolError,
  McpCallInterruptedError,
  McpCallNotFoundError,
  McpInputRequiredError,
} from './errors';
export { McpEvent, McpInboundSession, McpOutboundSession, McpResourceSubscription, MCP_ENTITIES } from './persistence/entities';
export type { McpEventDirection } from './persistence/entities';
export { MCP_MIGRATIONS, CreateMcpTables1764489600000, AddMcpServerFeatures1764576000000 } from './persistence/migrations';
export {
  MCP_SESSION_STORE,
  MCP_SUBSCRIPTION_STORE,
  MCP_EVENT_SINK,
  MCP_OUTBOUND_SESSION_STORE,
  MCP_STORE_SETTINGS,
  InjectMcpSessionStore,
  InjectMcpSubscriptionStore,
  InjectMcpEventSink,
  InjectMcpOutboundSessionStore,
  InjectMcpStoreSettings,
} from './persistence/mcp-persistence.constants';
export type { McpSessionStore, McpInboundSessionRecord, McpNewInboundSession } from './persistence/interfaces/mcp-session-store.interface';
export type { McpSubscriptionStore, McpSubscriptionRecord } from './persistence/interfaces/mcp-subscription-store.interface';
export type { McpEventSink, McpEventRecord, McpEventInput } from './persistence/interfaces/mcp-event-sink.interface';
export type { McpOutboundSessionStore, McpOutboundSessionRecord, McpOutboundSessionState } from './persistence/interfaces/mcp-outbound-session-store.interface';
export type { McpStoreSettings } from './persistence/interfaces/mcp-store-settings.interface';
export type { McpServerStores, McpClientStores, McpStoreOverride } from './persistence/store-providers';
export { MCP_COLUMN_LENGTHS } from './persistence/mcp-columns.constants';
export { JsonText } from './persistence/json-text';
export { isSessionLive, isSessionIdle, sessionIdleCutoff } from './persistence/session-liveness';
export * from './protocol';
export { McpClientService } from './client/mcp-client.service';
export { McpClientModule } from './client/mcp-client.module';
export { MCP_TRANSPORT_FACTORIES } from './client/mcp-client.constants';
export type { McpTransportFactory, McpTransportFactoryContext } from './client/transports/mcp-transport-factory.interface';
export { McpSamplingHandler, McpElicitationHandler, McpRootsHandler } from './client/decorators/mcp-client-handler.decorator';
export { MCP_CLIENT_OPTIONS } from './client/mcp-client.constants';
export { DEFAULT_MCP_CALL_QUEUE } from './client/config/client-options-resolver';
export type { McpResolvedClientOptions, McpResolvedQueueOptions } from './client/config/client-options-resolver';
export { loadServersFile } from './client/config/servers-file-loader';
export { resolveServerConfig } from './client/config/server-config-resolver';
export type { McpClientOptions, McpClientQueueOptions, McpClientModuleExtras } from './client/interfaces/mcp-client-options.interface';
export type {
  McpServerConfig,
  McpStdioServerConfig,
  McpHttpServerConfig,
  McpToolsetServerConfig,
  McpServerCommonConfig,
  McpServerVersion,
  McpServerScope,
  McpResolvedServerConfig,
  McpCustomServerConfig,
} from './client/interfaces/mcp-server-config.interface';
export type { McpClientHandlers, McpClientRequestHandler, McpClientHandlerContext, McpClientHandlerKind } from './client/interfaces/mcp-client-handlers.interface';
export type { McpCallJob, McpCallOptions, McpCallState } from './client/interfaces/mcp-call.interface';
export type { McpToolDefinition, McpServerTool, McpToolCatalog } from './client/tool-router';
export {
  toOpenAiTools,
  toAnthropicTools,
  toGeminiFunctionDeclarations,
  toGeminiSchema,
  toFunctionName,
} from './client/tool-format-converters';
export type { OpenAiTool, AnthropicTool, GeminiFunctionDeclaration, ToolFormatOptions } from './client/tool-format-converters';
export { ToolsetTransport } from './client/transports/toolset/toolset.transport';
export type { ToolsetTransportOptions } from './client/transports/toolset/toolset.transport';
export type {
  McpTransport,
  McpTransportContext,
  McpTransportDeliverOptions,
  McpTransportResult,
  McpHandshakeInfo,
  McpServerRequestHandler,
  McpServerNotificationHandler,
} from './client/transports/mcp-transport.interface';
export { StdioTransport } from './client/transports/stdio/stdio.transport';
export type { StdioTransportOptions, StdioPoolOptions } from './client/transports/stdio/stdio.options';
export { toStdioArgv } from './client/transports/stdio/stdio-argv';
export type { StdioServerConfig } from './client/transports/stdio/stdio-argv';
export type { StdioErrorDetails } from './client/transports/stdio/stdio.errors';
export { HttpTransport } from './client/transports/http/http.transport';
export type { HttpTransportOptions, HttpRetryOptions } from './client/transports/http/http.options';
