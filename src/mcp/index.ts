/**
 * durable-mcp: MCP servers and a durable MCP client for NestJS.
 *
 * The root entry point: what an app types to serve and to call MCP: modules, decorators,
 * services, the options it writes, the handler context and principal types, the token verifiers,
 * the `Inject*` decorators of the services and the entity and migration lists for its
 * `DataSource`. The other entry points: `durable-mcp/errors` (every error, for `instanceof`),
 * `durable-mcp/stores` (store contracts), `durable-mcp/testing` (in-memory stores for tests),
 * `durable-mcp/protocol` (the wire vocabulary), `durable-mcp/health` (health checks),
 * `durable-mcp/console` (the audit console), `durable-mcp/transports` (custom transports,
 * `mcpTransports()`, in-process delivery) and `durable-mcp/tool-formats` (tools as LLM function
 * declarations).
 *
 * @packageDocumentation
 */

// Serving: McpModule mounts, decorators and the notifiers (the toolset: durable-mcp/transports).
export { McpModule } from './mcp.module';
export type {
  McpModuleOptions,
  McpModuleExtras,
  McpCacheHint,
  McpModuleForRootOptions,
  McpModuleAsyncOptions,
} from './server/interfaces/mcp-module-options.interface';
export type { McpServerStores, McpClientStores } from './persistence/store-providers';
export type { McpTaskSupport } from './protocol/tasks';
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
// A gateway: a mount re-serves servers of McpClientModule.
export { McpGatewayModule } from './gateway/mcp-gateway.module';
export { McpGateway } from './gateway/mcp-gateway.service';
export type { McpGatewayModuleOptions } from './gateway/mcp-gateway.options';

// The app as the authorization server of its own mounts (oidc-provider, an optional peer).
export { McpAuthorizationServerModule } from './authorization-server/mcp-authorization-server.module';
export { McpAuthorizationServer } from './authorization-server/authorization-server.service';
export type { McpAuthorizationServerModuleOptions } from './authorization-server/authorization-server.options';
export { McpElicitationNotifier } from './server/features/mcp-elicitation-notifier';
export type {
  McpToolOptions,
  McpToolAnnotations,
  McpIcon,
  JsonSchema,
  McpRateLimit,
  McpToolSchema,
} from './interfaces/mcp-tool-options.interface';
export type { McpStandardSchema, McpStandardSchemaResult, McpToolArgs } from './interfaces/standard-schema.interface';
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
  McpRoundState,
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
export { MCP_ANONYMOUS_PRINCIPAL, isMcpAnonymous } from './server/pipeline/anonymous-principal';
export { JwtVerifier } from './server/oauth/jwt-verifier';
export { IntrospectionVerifier } from './server/oauth/introspection-verifier';
export type { McpClaimMapping } from './server/oauth/claims-principal';
export { McpDrainService } from './server/shutdown/mcp-drain.service';
export { serveMcpOverStdio } from './serve-mcp-over-stdio';

// Calling: McpClientModule, McpClientService, handlers, client auth and the transport contract.
export { McpClientModule } from './client/mcp-client.module';
export { McpClientService } from './client/mcp-client.service';
export type {
  McpClientOptions,
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
  McpCallServerRequest,
  McpCallServerRequestHandler,
} from './client/interfaces/mcp-call.interface';
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
  McpElicitationCompleteListener,
  McpSamplingHandlerOptions,
  McpSamplingHandlerConfig,
} from './client/interfaces/mcp-client-handlers.interface';
export type { McpToolDefinition, McpServerTool } from './client/tool-router';
export type { McpClientTransports } from './client/transports/mcp-client-transports';
export { staticToken } from './client/auth/static-token.auth';
export { clientCredentials } from './client/auth/client-credentials.auth';
export { authorizationCode } from './client/auth/authorization-code/authorization-code.auth';
export { McpOAuthService } from './client/auth/authorization-code/mcp-oauth.service';
export type {
  McpCompletedAuthorization,
  McpAuthorizationCallbackQuery,
} from './client/auth/authorization-code/mcp-oauth.service';
export type { McpOAuthEncryptionKey } from './token-cipher';
export type {
  McpClientAuth,
  McpAuthTarget,
  McpAuthChallenge,
  McpTokenStore,
} from './client/auth/mcp-client-auth.interface';

// Persistence: the lists a host passes to its DataSource (entities one by one: durable-mcp/stores).
export { MCP_ENTITIES } from './persistence/entities';
export { MCP_MIGRATIONS, MCP_PARTITIONING_MIGRATIONS } from './persistence/migrations';

// Redis: the one connection description of a module's `redis` (URL, Sentinel, Cluster).
export type { McpRedisConnection, McpRedisClusterConnection } from './redis-connection';

// Retention: the pruner of a mount or of the client.
export { McpRetentionService } from './persistence/retention/mcp-retention.service';
export type { McpRetentionOptions, McpClientRetentionOptions } from './persistence/retention/mcp-retention.options';
export type { McpRetentionReport, McpRetentionTableReport } from './persistence/retention/retention-pruner';
export { getMcpRetentionToken, InjectMcpRetention } from './mcp.constants';
export { MCP_CLIENT_RETENTION } from './client/mcp-client.constants';
export type { McpAuditOptions } from './persistence/interfaces/mcp-audit-options.interface';

// Observability: the telemetry option and the instrumentation's name.
export type { McpTelemetryOptions } from './telemetry/mcp-telemetry.options';
export { MCP_INSTRUMENTATION_NAME } from './telemetry/mcp-telemetry.constants';

export type { McpLogLevel } from './protocol/log-levels';
