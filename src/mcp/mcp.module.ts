import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule, ModuleRef } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  DEFAULT_MOUNT,
  DEFAULT_PATH,
  MCP_AUTHORIZATION_SERVER_ISSUER,
  MCP_MODULE_OPTIONS,
  getMcpOptionsToken,
  getMcpRetentionToken,
  getMcpStdioEndpointToken,
  getMcpToolsetToken,
} from './mcp.constants';
import { McpRetentionService } from './persistence/retention/mcp-retention.service';
import { MCP_RAW_OPTIONS, McpConfigurableModule } from './mcp.module-definition';
import { MCP_ENTITIES } from './persistence/entities';
import { createMcpServerStoreProviders } from './persistence/store-providers';
import { mcpFeatureExports } from './server/feature.providers';
import type {
  McpModuleAsyncOptions,
  McpModuleExtras,
  McpModuleForRootOptions,
  McpModuleOptions,
} from './server/interfaces/mcp-module-options.interface';
import { createMcpServerParts } from './server/mcp-server.providers';
import { resolveMcpOptions, type McpResolvedOptions } from './server/config/mcp.options';
import { McpDrainModule } from './server/shutdown/mcp-drain.module';

/** Feature registration shared by every mount: Nest 11 identifies dynamic modules by object identity. */
const MCP_TYPEORM_FEATURE = TypeOrmModule.forFeature(MCP_ENTITIES);

/**
 * One MCP endpoint serving one toolset. `forRoot` / `forRootAsync` mount it; call it once per
 * mount (distinct `mount` and `path`). The host app owns the TypeORM connection
 * (`TypeOrmModule.forRoot` with `MCP_ENTITIES`) unless the `stores` extra swaps every store. To
 * call other MCP servers, register `McpClientModule` once per app.
 */
@Module({})
export class McpModule {
  /** Mounts an MCP endpoint with static options. */
  static forRoot(options: McpModuleForRootOptions): DynamicModule {
    return McpModule.withMount({ ...McpConfigurableModule.forRoot(options), module: McpModule }, options);
  }

  /** Mounts an MCP endpoint whose options come from a factory, class or existing provider. */
  static forRootAsync(options: McpModuleAsyncOptions): DynamicModule {
    return McpModule.withMount({ ...McpConfigurableModule.forRootAsync(options), module: McpModule }, options);
  }

  private static withMount(definition: DynamicModule, extras: Partial<McpModuleExtras>): DynamicModule {
    const mount = extras.mount ?? DEFAULT_MOUNT;
    const path = extras.path ?? DEFAULT_PATH;
    const stores = createMcpServerStoreProviders(extras.stores);
    const server = createMcpServerParts(mount, path);
    return {
      ...definition,
      // With every store swapped (e.g. the in-memory ones of durable-mcp/testing) the app needs no DataSource.
      imports: [
        ...(definition.imports ?? []),
        DiscoveryModule,
        PassportModule,
        McpDrainModule,
        ...(stores.needsTypeOrm ? [MCP_TYPEORM_FEATURE] : []),
        ...server.imports,
      ],
      controllers: server.controllers,
      providers: [
        ...(definition.providers ?? []),
        {
          provide: MCP_MODULE_OPTIONS,
          useFactory: (raw: McpModuleOptions, authorizationServer?: string) =>
            resolveMcpOptions(raw, { mount, path }, authorizationServer),
          inject: [MCP_RAW_OPTIONS, { token: MCP_AUTHORIZATION_SERVER_ISSUER, optional: true }],
        },
        { provide: getMcpOptionsToken(mount), useExisting: MCP_MODULE_OPTIONS },
        ...stores.providers,
        ...server.providers,
        {
          provide: getMcpRetentionToken(mount),
          useFactory: (options: McpResolvedOptions, moduleRef: ModuleRef) =>
            new McpRetentionService(
              {
                scope: { kind: 'mount', mount, idleTtlMs: options.sessions.idleTtlMs },
                retention: options.retention,
                queue:
                  options.redis === undefined
                    ? null
                    : { name: `mcp-retention-${mount}`, redis: options.redis, options: {} },
              },
              moduleRef,
            ),
          inject: [MCP_MODULE_OPTIONS, ModuleRef],
        },
        { provide: McpRetentionService, useExisting: getMcpRetentionToken(mount) },
      ],
      exports: [
        getMcpToolsetToken(mount),
        getMcpOptionsToken(mount),
        getMcpRetentionToken(mount),
        getMcpStdioEndpointToken(mount),
        McpRetentionService,
        ...mcpFeatureExports(mount),
      ],
    };
  }
}
