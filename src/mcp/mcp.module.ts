import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { McpClientService } from './client/mcp-client.service';
import { createMcpClientProviders } from './client/mcp-client.providers';
import type { McpModuleOptions } from './interfaces/mcp-module-options.interface';
import { DEFAULT_MOUNT, DEFAULT_PATH, MCP_MODULE_OPTIONS, getMcpClientToken, getMcpOptionsToken, getMcpToolsetToken } from './mcp.constants';
import { MCP_ASYNC_OPTIONS_TYPE, MCP_OPTIONS_TYPE, MCP_RAW_OPTIONS, McpConfigurableModule } from './mcp.module-definition';
import { resolveMcpOptions } from './mcp.options';
import { MCP_ENTITIES } from './persistence/entities';
import { createMcpClientStoreProviders, createMcpServerStoreProviders, mergeMcpStoreProviders, type McpStores } from './persistence/store-providers';
import { createMcpServerParts } from './server/mcp-server.providers';
import { mcpFeatureExports } from './server/features/feature.providers';

/** Feature registration shared by every mount: Nest 11 identifies dynamic modules by object identity. */
const MCP_TYPEORM_FEATURE = TypeOrmModule.forFeature(MCP_ENTITIES);

/**
 * The durable-mcp module. `forRoot` / `forRootAsync` mount one MCP endpoint serving one toolset;
 * call it once per mount (distinct `mount` and `path`). The host app owns the TypeORM connection
 * (`TypeOrmModule.forRoot` with `MCP_ENTITIES`) unless the `stores` extra swaps every store.
 * Every mount provides and exports `McpClientService`; give the `client` options to one mount
 * per app (`serve: false` makes a client-only or worker-only mount without endpoint or auth).
 */
@Module({})
export class McpModule extends McpConfigurableModule {
  /** Mounts an MCP endpoint with static options. */
  static override forRoot(options: typeof MCP_OPTIONS_TYPE): DynamicModule {
    return McpModule.withMount(super.forRoot(options), options);
  }

  /** Mounts an MCP endpoint whose options come from a factory, class or existing provider. */
  static override forRootAsync(options: typeof MCP_ASYNC_OPTIONS_TYPE): DynamicModule {
    return McpModule.withMount(super.forRootAsync(options), options);
  }

  private static withMount(definition: DynamicModule, extras: { mount?: string; path?: string; serve?: boolean; stores?: McpStores }): DynamicModule {
    const mount = extras.mount ?? DEFAULT_MOUNT;
    const path = extras.path ?? DEFAULT_PATH;
    const serve = extras.serve ?? true;
    const stores = mergeMcpStoreProviders(createMcpClientStoreProviders(extras.stores), serve ? createMcpServerStoreProviders(extras.stores) : undefined);
    // With every store swapped (e.g. the in-memory ones of durable-mcp/testing) the app needs no DataSource.
    const typeorm = stores.needsTypeOrm ? [MCP_TYPEORM_FEATURE] : [];
    const common: Provider[] = [
      {
        provide: MCP_MODULE_OPTIONS,
        useFactory: (raw: McpModuleOptions) => resolveMcpOptions(raw, { mount, path, serve }),
        inject: [MCP_RAW_OPTIONS],
      },
      { provide: getMcpOptionsToken(mount), useExisting: MCP_MODULE_OPTIONS },
      ...stores.providers,
      ...createMcpClientProviders(),
      { provide: getMcpClientToken(mount), useExisting: McpClientService },
    ];
    if (!serve) {
      return {
        ...definition,
        imports: [...(definition.imports ?? []), DiscoveryModule, ...typeorm],
        providers: [...(definition.providers ?? []), ...common],
        exports: [getMcpOptionsToken(mount), McpClientService, getMcpClientToken(mount)],
      };
    }
    const server = createMcpServerParts(mount, path);
    return {
      ...definition,
      imports: [...(definition.imports ?? []), DiscoveryModule, PassportModule, ...typeorm],
      controllers: server.controllers,
      providers: [...(definition.providers ?? []), ...common, ...server.providers],
      exports: [getMcpToolsetToken(mount), getMcpOptionsToken(mount), McpClientService, getMcpClientToken(mount), ...mcpFeatureExports(mount)],
    };
  }
}
