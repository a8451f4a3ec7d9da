/**
 * durable-mcp: MCP servers and a durable MCP client for NestJS.
 *
 * The root entry point: modules, decorators, services, options, errors, entities, migrations and
 * store contracts. Wire types live in `durable-mcp/protocol`; in-memory stores for tests in
 * `durable-mcp/testing`.
 *
 * @packageDocumentation
 */

// Serving: McpModule mounts, decorators, the resource notifier and the toolset.
export { McpModule } from './mcp.module';
export type {
  McpModuleOptions,
  McpAdvancedOptions,
  McpModuleExtras,
  McpServerInfoOptions,
  McpSessionOptions,
  McpDatabaseOptions,
  McpStatelessOptions,
  McpCacheOptions,
  McpCacheHint,
  McpModuleForRootOptions,
  McpModuleAsyncOptions,
} from './server/interfaces/mcp-module-options.interface';
export type { McpResolvedOptions } from './server/mcp.options';
export type { McpStreamOptions, McpResolvedStreamOptions } from './server/http/mcp-stream.options';
export type { McpLimitsOptions, McpResolvedLimits } from './server/mcp-limits.options';
export type { McpSessionCacheOptions, McpResolvedSessionCache } from './server/sessions/mcp-session-cache.options';
export type { McpPubSubOptions } from './server/pubsub/mcp-pubsub.interface';
export type { McpTasksOptions, McpResolvedTasksOptions } from './server/tasks/mcp-tasks.options';
export type { McpTaskQueueStats } from './server/tasks/mcp-task.queue';
export type { McpTaskStatus, McpTaskSupport } from './protocol/tasks';
export {
  MCP_MODULE_OPTIONS,
  DEFAULT_MOUNT,
  DEFAULT_PATH,
  getMcpToolsetToken,
  getMcpOptionsToken,
  InjectMcpToolset,
} from './mcp.constants';
export { getMcpResourceNotifierToken, InjectMcpResourceNotifier } from './mcp.constants';
export { getMcpElicitationNotifierToken, InjectMcpElicitationNotifier } from './mcp.constants';
export { McpTool } from './server/decorators/mcp-tool.decorator';
export { getMcpContext, MCP_CONTEXT_TYPE } from './server/pipeline/mcp-execution-context';
export type { McpExecutionInfo, McpHandlerKind } from './server/pipeline/mcp-execution-context';
export { McpResource } from './server/decorators/mcp-resource.decorator';
export { McpResourceTemplate } from './server/decorators/mcp-resource-template.decorator';
export { McpPrompt } from './server/decorators/mcp-prompt.decorator';
export { McpResourceNotifier } from './server/features/mcp-resource-notifier';
export { McpRegistry, getMcpRegistryToken } from './server/registry/mcp-registry';
export type {
  McpRuntimeTool,
  McpRuntimePrompt,
  McpRuntimeResource,
  McpRuntimeResourceTemplate,
  McpRuntimeHandler,
  McpRuntimeResourceHandler,
  McpSwitchOptions,
} from './server/registry/mcp-registry';
export { McpElicitationNotifier } from './server/features/mcp-elicitation-notifier';
export { Toolset } from './server/toolset';
export type { ToolsetIdentity } from './server/toolset';
export type { McpToolOptions, McpToolAnnotations, McpIcon, JsonSchema } from './interfaces/mcp-tool-options.interface';
export type {
  McpToolContext,
  McpContent,
  McpCallToolResult,
  McpToolReturn,
  McpInputRequestOptions,
  McpElicitResult,
  McpUrlElicitation,
  McpUrlElicitResult,
  McpRoot,
  McpTaskContext,
} from './interfaces/mcp-tool-context.interface';
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
export type {
  McpPromptOptions,
  McpPromptArgument,
  McpPromptMessage,
  McpGetPromptResult,
  McpPromptReturn,
} from './interfaces/mcp-prompt-options.interface';
export type {
  McpCompleter,
  McpCompleters,
  McpCompletionContext,
  McpCompletionList,
} from './interfaces/mcp-completion.interface';
export type { McpPrincipal, McpAuthResult, McpAuthorizeFn, McpAuthorizer } from './interfaces/principal.interface';
export { MCP_ANONYMOUS_KEY, MCP_ANONYMOUS_PRINCIPAL, isMcpAnonymous } from './server/auth/anonymous-principal';
export type {
  McpOAuthOptions,
  McpProtectedResourceMetadata,
  McpResolvedOAuthOptions,
} from './server/oauth/mcp-oauth.options';
export { JwtVerifier, MCP_JWT_VERIFIER_OPTIONS } from './server/oauth/jwt-verifier';
export type { JwtVerifierOptions } from './server/oauth/jwt-verifier';
export { IntrospectionVerifier, MCP_INTROSPECTION_VERIFIER_OPTIONS } from './server/oauth/introspection-verifier';
export type { IntrospectionVerifierOptions } from './server/oauth/introspection-verifier';
export type { McpClaimMapping } from './server/oauth/claims-principal';
export { McpAuthorizationServerError } from './server/oauth/oauth.errors';
export type { McpDeliveryContext, McpMessageHandler, McpClientChannel } from './interfaces/mcp-delivery.interface';
export { MCP_SESSION_NOTIFIER } from './interfaces/mcp-session-notifier.interface';
export type { McpShutdownOptions, McpResolvedShutdownOptions } from './server/shutdown/mcp-shutdown.options';
export { McpDrainService } from './server/shutdown/mcp-drain.service';
export type { McpDrainStatus, McpInFlightRequest } from './server/shutdown/mcp-drain.service';

// Operations: health checks on @nestjs/terminus (an optional peer, loaded by McpHealthModule.forRoot).
export { McpHealthModule } from './health/mcp-health.module';
export { McpHealthIndicator } from './health/mcp-health.indicator';
export type { McpHealthGuard, McpHealthModuleOptions } from './health/mcp-health.options';
export type { McpSessionNotifier } from './interfaces/mcp-session-notifier.interface';

// Calling: McpClientModule, McpClientService, handlers and transports.
export { McpClientModule } from './client/mcp-client.module';
export { McpClientService } from './client/mcp-client.service';
export type {
  McpClientOptions,
  McpClientAdvancedOptions,
  McpClientQueueOptions,
  McpClientModuleExtras,
  McpClientModuleOptions,
  McpClientModuleAsyncOptions,
} from './client/interfaces/mcp-client-options.interface';
export type {
  McpServerConfig,
  McpStdioServerConfig,
  McpHttpServerConfig,
  McpToolsetServerConfig,
  McpCustomServerConfig,
  McpServerCommonConfig,
  McpServerVersion,
  McpServerScope,
} from './client/interfaces/mcp-server-config.interface';
export type {
  McpCallOptions,
  McpCallState,
  McpToolArguments,
  McpCallProgress,
  McpCallLogMessage,
  McpCallTaskOptions,
} from './client/interfaces/mcp-call.interface';
export { McpCallAbortedError } from './client/mcp-call-aborted.errors';
export { McpTaskNotSupportedError } from './client/mcp-task-call.errors';
export {
  McpSamplingHandler,
  McpElicitationHandler,
  McpUrlElicitationHandler,
  McpRootsHandler,
} from './client/decorators/mcp-client-handler.decorator';
export type {
  McpClientHandlers,
  McpClientRequestHandler,
  McpClientHandlerContext,
  McpClientHandlerKind,
  McpElicitationCompleteListener,
  McpSamplingHandlerOptions,
  McpSamplingHandlerConfig,
} from './client/interfaces/mcp-client-handlers.interface';
export type { McpToolDefinition, McpServerTool } from './client/tool-router';
export {
  toOpenAiTools,
  toAnthropicTools,
  toGeminiFunctionDeclarations,
  toGeminiSchema,
  toFunctionName,
} from './client/tool-format-converters';
export type {
  OpenAiTool,
  AnthropicTool,
  GeminiFunctionDeclaration,
  ToolFormatOptions,
  McpToolFormatInput,
} from './client/tool-format-converters';
export { MCP_TRANSPORT_FACTORIES } from './client/mcp-client.constants';
export type {
  McpTransportFactory,
  McpTransportFactoryContext,
} from './client/transports/mcp-transport-factory.interface';
export type {
  McpTransport,
  McpTransportContext,
  McpTransportDeliverOptions,
  McpTransportResult,
  McpHandshakeInfo,
  McpServerRequestHandler,
  McpServerNotificationHandler,
  McpNotificationOrigin,
} from './client/transports/mcp-transport.interface';
export { HttpTransport } from './client/transports/http/http.transport';
export { staticToken } from './client/auth/static-token.auth';
export { clientCredentials } from './client/auth/client-credentials.auth';
export type {
  McpClientCredentialsOptions,
  McpPrivateKeyJwt,
  McpTokenEndpointAuthMethod,
} from './client/auth/client-credentials.auth';
export type {
  McpClientAuth,
  McpAuthTarget,
  McpAuthChallenge,
  McpTokenStore,
} from './client/auth/mcp-client-auth.interface';
export {
  McpOAuthClientError,
  McpOAuthScopeLimitError,
  McpUntrustedAuthorizationServerError,
} from './client/auth/oauth-client.errors';
export type { HttpTransportOptions, HttpRetryOptions } from './client/transports/http/http.options';
export { StdioTransport } from './client/transports/stdio/stdio.transport';
export type { StdioTransportOptions, StdioPoolOptions } from './client/transports/stdio/stdio.options';
export type { StdioErrorDetails, StdioClientError } from './client/transports/stdio/stdio.errors';
export type { StdioPoolStats } from './client/transports/stdio/stdio-pool';
export { toStdioArgv } from './client/transports/stdio/stdio-argv';
export type { StdioServerConfig } from './client/transports/stdio/stdio-argv';
export { ToolsetTransport } from './client/transports/toolset/toolset.transport';
export type { ToolsetTransportOptions } from './client/transports/toolset/toolset.transport';

// Errors.
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
export { McpInfrastructureError } from './errors/mcp-infrastructure.errors';
export { McpEventRejectedError } from './errors/mcp-event-rejected.errors';
export {
  McpDatabaseUnavailableError,
  McpBusUnavailableError,
  McpQueueUnavailableError,
  McpCallWaitTimeoutError,
} from './errors/mcp-outage.errors';
export {
  McpClientRequestError,
  McpClientRequestTimeoutError,
  McpRequestEndedError,
} from './errors/mcp-client-request.errors';
export { McpUnsupportedElicitationModeError, McpUrlElicitationRequiredError } from './errors/mcp-elicitation.errors';
export type { McpRequiredUrlElicitation } from './errors/mcp-elicitation.errors';
export { McpUnsupportedSamplingToolsError } from './errors/mcp-sampling.errors';
export type { McpElicitationMode } from './protocol/elicitation';
export { HttpSessionExpiredError } from './client/transports/http/http-session-expired.errors';

// Persistence: entities, migrations, store contracts.
export {
  McpEvent,
  McpInboundSession,
  McpOutboundSession,
  McpResourceSubscription,
  McpHandlerSwitch,
  McpTask,
  MCP_ENTITIES,
} from './persistence/entities';
export type { McpEventDirection } from './persistence/entities';
export {
  MCP_MIGRATIONS,
  CreateMcpTables1764489600000,
  AddMcpServerFeatures1764576000000,
  AddOutboundSessionEndpoint1767225600000,
  AddMcpHandlerSwitches1767312000000,
  AddMcpTasks1767398400000,
  AddMcpEventTraceId1767484800000,
  AddMcpRetentionIndexes1767571200000,
  MCP_PARTITIONING_MIGRATIONS,
  McpEventsPartitioning1767657600000,
} from './persistence/migrations';

// Retention: the pruner of a mount or of the client.
export { McpRetentionService } from './persistence/retention/mcp-retention.service';
export type { McpRetentionSettings } from './persistence/retention/mcp-retention.service';
export type {
  McpRetentionOptions,
  McpClientRetentionOptions,
  McpResolvedRetention,
} from './persistence/retention/mcp-retention.options';
export type {
  McpRetentionReport,
  McpRetentionTableReport,
  McpRetentionScope,
} from './persistence/retention/retention-pruner';
export type { RetentionQueueSettings } from './persistence/retention/retention-schedule';
export { getMcpRetentionToken, InjectMcpRetention } from './mcp.constants';
export { MCP_CLIENT_RETENTION } from './client/mcp-client.constants';
export {
  MCP_SESSION_STORE,
  MCP_SUBSCRIPTION_STORE,
  MCP_HANDLER_SWITCH_STORE,
  MCP_TASK_STORE,
  MCP_EVENT_SINK,
  MCP_OUTBOUND_SESSION_STORE,
  MCP_STORE_SETTINGS,
  InjectMcpSessionStore,
  InjectMcpSubscriptionStore,
  InjectMcpHandlerSwitchStore,
  InjectMcpTaskStore,
  InjectMcpEventSink,
  InjectMcpOutboundSessionStore,
  InjectMcpStoreSettings,
} from './persistence/mcp-persistence.constants';
export type {
  McpSessionStore,
  McpInboundSessionRecord,
  McpNewInboundSession,
} from './persistence/interfaces/mcp-session-store.interface';
export type {
  McpSubscriptionStore,
  McpSubscriptionRecord,
  McpResourceSubscriber,
} from './persistence/interfaces/mcp-subscription-store.interface';
export type {
  McpHandlerSwitchStore,
  McpHandlerSwitchRecord,
} from './persistence/interfaces/mcp-handler-switch-store.interface';
export type {
  McpTaskStore,
  McpTaskRecord,
  McpNewTask,
  McpTaskPayload,
} from './persistence/interfaces/mcp-task-store.interface';
export type { McpEventSink, McpEventRecord, McpEventInput } from './persistence/interfaces/mcp-event-sink.interface';
export type {
  McpOutboundSessionStore,
  McpOutboundSessionRecord,
  McpOutboundSessionState,
} from './persistence/interfaces/mcp-outbound-session-store.interface';
export type { McpStoreSettings } from './persistence/interfaces/mcp-store-settings.interface';
export type { McpAuditOptions } from './persistence/interfaces/mcp-audit-options.interface';

// Observability: the telemetry option, instrumentation names and the trace-context helpers.
export type { McpTelemetryOptions, McpResolvedTelemetryOptions } from './telemetry/mcp-telemetry.options';
export { MCP_INSTRUMENTATION_NAME, McpAttr } from './telemetry/mcp-telemetry.constants';
export { MCP_GAUGES } from './telemetry/mcp-metrics';
export type { McpGaugeName } from './telemetry/mcp-metrics';
export { TRACE_CONTEXT_KEYS, extractInboundContext, paramsWithTraceContext } from './telemetry/trace-carriers';
export type { McpHeaderBag } from './telemetry/trace-carriers';
export type { McpServerStores, McpClientStores, McpStoreOverride } from './persistence/store-providers';
export { MCP_COLUMN_LENGTHS } from './persistence/mcp-columns.constants';
export { JsonText } from './persistence/json-text';
export { isSessionLive, isSessionIdle, sessionIdleCutoff } from './persistence/session-liveness';

// The wire types that the signatures above use (the whole vocabulary is in durable-mcp/protocol).
export type {
  JsonRpcId,
  JsonRpcRequest,
  JsonRpcNotification,
  JsonRpcResponse,
  JsonRpcSuccess,
  JsonRpcError,
  JsonRpcErrorObject,
  JsonRpcMessage,
} from './protocol/jsonrpc';
export { MCP_LOG_LEVELS } from './protocol/log-levels';
export type { McpLogLevel } from './protocol/log-levels';

// The audit console: read-only pages of sessions, events and tasks behind the app's own guard.
export { McpConsoleModule } from './console/mcp-console.module';
export { McpAuditQuery } from './console/mcp-audit-query.service';
export type {
  McpConsoleOptions,
  McpConsoleResolvedOptions,
  McpConsoleModuleExtras,
  McpConsoleModuleForRootOptions,
  McpConsoleModuleAsyncOptions,
  McpConsoleGuard,
  McpConsoleScope,
  McpConsoleScopeFn,
} from './console/mcp-console.options';
export type {
  McpConsoleCursor,
  McpConsolePage,
  McpConsoleSession,
  McpConsoleTask,
  McpConsoleEvent,
  McpConsoleEventFilter,
  McpConsoleThroughput,
} from './console/mcp-console-records.interface';
