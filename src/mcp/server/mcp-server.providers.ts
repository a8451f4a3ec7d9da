import type { CanActivate, DynamicModule, Provider, Type } from '@nestjs/common';
import {
  MCP_MODULE_OPTIONS,
  getMcpStdioEndpointToken,
  getMcpTaskServiceToken,
  getMcpToolsetToken,
} from '../mcp.constants';
import { MCP_SESSION_NOTIFIER } from '../interfaces/mcp-session-notifier.interface';
import type { McpResolvedOptions } from './config/mcp.options';
import { createMcpAuthGuard } from './auth/mcp-auth.guard';
import { createMcpBearerStrategy } from './auth/mcp-bearer.strategy';
import { McpBodyReaderInstaller } from './http/mcp-body-reader-installer';
import { createMcpController } from './http/mcp.controller';
import { MCP_BEARER_GUARD, MCP_FAST_PATH_ROUTE, McpFastPath, type McpFastPathRoute } from './http/mcp-fast-path';
import { McpHttpRoutesModule } from './http/mcp-http-routes.module';
import { McpHttpEndpoint } from './http/mcp-http.endpoint';
import { McpStdioEndpoint } from './stdio/mcp-stdio.endpoint';
import { McpOriginGuard } from './http/mcp-origin.guard';
import { McpPendingClientRequests } from './sessions/mcp-session-channel-pending';
import { McpStreamEndpoint } from './http/mcp-stream.endpoint';
import { McpStatelessAudit } from './http/mcp-stateless-audit';
import { McpListenAgreement } from './http/mcp-listen-agreement';
import { McpStatelessEndpoint } from './http/mcp-stateless.endpoint';
import { McpStreamRegistry } from './sessions/mcp-stream-registry';
import { McpServerGauges } from './http/mcp-server-gauges';
import { McpMetadataAccessor } from './decorators/mcp-metadata.accessor';
import { FeaturesExplorer } from './features.explorer';
import { createMcpFeatureProviders } from './feature.providers';
import { McpListenStreams } from './stateless/listen-stream-registry';
import { MrtrRounds } from './stateless/mrtr-rounds';
import { RequestStateCodec } from './stateless/request-state-codec';
import { McpStatelessResponder } from './stateless/stateless-responder';
import {
  MCP_PUBSUB,
  mcpEventLogProvider,
  mcpPubSubProvider,
  mountBusPrefix,
  type McpPubSub,
} from './pubsub/mcp-pubsub.providers';
import { createRateCounter, ToolRateLimits } from './ratelimit/tool-rate-limits';
import { McpSessionBus } from './sessions/mcp-session-bus';
import { getMcpMountBusToken, McpMountBus } from './pubsub/mount-bus';
import { McpCachedSessionStore } from './sessions/mcp-cached-session.store';
import type { McpStoreSettings } from '../persistence/interfaces/mcp-store-settings.interface';
import { MCP_STORE_SETTINGS } from '../persistence/mcp-persistence.constants';
import {
  McpProtectedResourceRegistration,
  createProtectedResourceController,
} from './oauth/protected-resource.controller';
import { McpProtectedResourceRootModule } from './oauth/protected-resource-root.module';
import { Toolset } from './dispatch/toolset';
import { getMcpRegistryToken, McpRegistry } from './registry/mcp-registry';
import { ToolsetExplorer } from './toolset.explorer';
import { redisKeyPrefix } from '../redis-connection';
import { McpTaskService } from './tasks/mcp-tasks.service';
import { McpTaskInputChannel } from './tasks/task-input-channel';
import { McpTaskTransitions } from './tasks/task-transitions';
import { McpTaskWorker } from './tasks/task-worker';

/** The package version announced as `serverInfo.version` when none is configured. */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the manifest is outside rootDir, so it cannot be imported
const PACKAGE_VERSION: string = (require('../../../package.json') as { version: string }).version;

/** What serving one mount adds to its module. */
export interface McpServerParts {
  providers: Provider[];
  controllers: Type<unknown>[];
  imports: (DynamicModule | Type<unknown>)[];
}

/**
 * The providers and the controller that serve one mount over HTTP: its toolset and explorer,
 * the settings its stores read (the stores come from `createMcpServerStoreProviders`), the endpoint, the origin check and the per-mount bearer strategy and guard.
 */
export function createMcpServerParts(mount: string, path: string): McpServerParts {
  const strategy = createMcpBearerStrategy(mount);
  const guard: Type<CanActivate> = createMcpAuthGuard(strategy);
  const controller = createMcpController(path, [McpOriginGuard, guard]);
  const providers: Provider[] = [
    {
      provide: Toolset,
      useFactory: (options: McpResolvedOptions, pubsub: McpPubSub) =>
        new Toolset(
          mount,
          {
            name: options.server?.name ?? 'durable-mcp',
            version: options.server?.version ?? PACKAGE_VERSION,
            title: options.server?.title,
            instructions: options.server?.instructions,
          },
          options.pageSize,
          // On a Cluster the budgets of a call, counted by one script, share the mount's hash tag.
          new ToolRateLimits(
            createRateCounter(pubsub),
            redisKeyPrefix(mountBusPrefix(options), options.redis),
            options.rateLimit,
          ),
        ),
      inject: [MCP_MODULE_OPTIONS, MCP_PUBSUB],
    },
    { provide: getMcpToolsetToken(mount), useExisting: Toolset },
    McpMetadataAccessor,
    ToolsetExplorer,
    ...createMcpFeatureProviders(mount),
    FeaturesExplorer,
    {
      provide: MCP_STORE_SETTINGS,
      useFactory: (o: McpResolvedOptions): McpStoreSettings => ({
        mount: o.mount,
        idleTtlMs: o.sessions.idleTtlMs,
        databaseTimeoutMs: o.database.timeoutMs,
        auditCommit: o.audit.commit,
      }),
      inject: [MCP_MODULE_OPTIONS],
    },
    McpHttpEndpoint,
    McpStdioEndpoint,
    { provide: getMcpStdioEndpointToken(mount), useExisting: McpStdioEndpoint },
    mcpPubSubProvider,
    mcpEventLogProvider,
    McpMountBus,
    { provide: getMcpMountBusToken(mount), useExisting: McpMountBus },
    McpPendingClientRequests,
    McpStreamRegistry,
    McpServerGauges,
    McpSessionBus,
    McpCachedSessionStore,
    { provide: MCP_SESSION_NOTIFIER, useExisting: McpSessionBus },
    McpStreamEndpoint,
    RequestStateCodec,
    MrtrRounds,
    McpStatelessResponder,
    McpListenStreams,
    McpStatelessAudit,
    McpListenAgreement,
    McpStatelessEndpoint,
    McpRegistry,
    McpTaskTransitions,
    McpTaskInputChannel,
    McpTaskWorker,
    McpTaskService,
    { provide: getMcpTaskServiceToken(mount), useExisting: McpTaskService },
    { provide: getMcpRegistryToken(mount), useExisting: McpRegistry },
    McpOriginGuard,
    McpBodyReaderInstaller,
    strategy,
    guard,
    { provide: MCP_BEARER_GUARD, useExisting: guard },
    {
      provide: MCP_FAST_PATH_ROUTE,
      useValue: { controller, handler: (controller.prototype as { post: McpFastPathRoute['handler'] }).post },
    },
    McpFastPath,
  ];
  const metadata = createProtectedResourceController(path);
  return {
    providers: [...providers, McpProtectedResourceRegistration],
    controllers: [controller, ...(metadata ? [metadata] : [])],
    imports: [McpHttpRoutesModule.forPath(path), McpProtectedResourceRootModule],
  };
}
