import { Module, type DynamicModule } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MCP_ENTITIES } from '../persistence/entities';
import { TypeOrmOAuthClientStore } from '../persistence/typeorm/typeorm-oauth-client.store';
import { TypeOrmOAuthGrantStore } from '../persistence/typeorm/typeorm-oauth-grant.store';
import { createOAuthClientMetadataController } from './auth/authorization-code/client-metadata.controller';
import { McpOAuthService } from './auth/authorization-code/mcp-oauth.service';
import { createOAuthCallbackController } from './auth/authorization-code/oauth-callback.controller';
import { createMcpClientStoreProviders } from '../persistence/store-providers';
import type {
  McpClientModuleAsyncOptions,
  McpClientModuleExtras,
  McpClientModuleOptions,
} from './interfaces/mcp-client-options.interface';
import { McpClientConfigurableModule } from './mcp-client.module-definition';
import { MCP_CLIENT_OPTIONS, MCP_CLIENT_RETENTION, MCP_TRANSPORT_FACTORIES } from './mcp-client.constants';
import { createMcpClientProviders } from './mcp-client.providers';
import { McpClientService } from './mcp-client.service';

/** The TypeORM feature registration of the client, shared: Nest 11 identifies dynamic modules by object identity. */
const MCP_CLIENT_TYPEORM_FEATURE = TypeOrmModule.forFeature(MCP_ENTITIES);

/**
 * The MCP client of an app: register it once, at the root (`McpClientModule.forRoot` or
 * `forRootAsync`), then inject `McpClientService` anywhere. Calls run as jobs on one queue (Bull
 * on Redis when configured, else inline); the app's `McpModule` mounts serve and carry no client
 * options. The host app owns the TypeORM connection (`TypeOrmModule.forRoot` with `MCP_ENTITIES`)
 * and, when it uses Bull for other queues, may share its `BullModule.forRoot` configuration.
 *
 * @example
 * ```ts
 * McpClientModule.forRoot({
 *   servers: { everything: { command: ['npx', '-y', '@modelcontextprotocol/server-everything'] } },
 *   redis: process.env.REDIS_URL,
 * })
 * ```
 */
@Module({})
export class McpClientModule {
  /** Registers the client with static options. */
  static forRoot(options: McpClientModuleOptions): DynamicModule {
    return McpClientModule.withClient(
      { ...McpClientConfigurableModule.forRoot(options), module: McpClientModule },
      options,
    );
  }

  /** Registers the client with options from a factory, class or existing provider. */
  static forRootAsync(options: McpClientModuleAsyncOptions): DynamicModule {
    return McpClientModule.withClient(
      { ...McpClientConfigurableModule.forRootAsync(options), module: McpClientModule },
      options,
    );
  }

  private static withClient(definition: DynamicModule, extras: McpClientModuleExtras): DynamicModule {
    const stores = createMcpClientStoreProviders(extras.stores);
    const callbackPath = extras.oauthCallbackPath;
    const metadataPath = extras.oauthClientMetadataPath;
    return {
      ...definition,
      imports: [
        ...(definition.imports ?? []),
        DiscoveryModule,
        ...(stores.needsTypeOrm ? [MCP_CLIENT_TYPEORM_FEATURE] : []),
      ],
      // The user-delegated OAuth grants live in the database: their store needs the TypeORM feature.
      providers: [
        ...(definition.providers ?? []),
        ...stores.providers,
        ...createMcpClientProviders(extras),
        ...(stores.needsTypeOrm ? [TypeOrmOAuthGrantStore, TypeOrmOAuthClientStore] : []),
        McpOAuthService,
      ],
      controllers: [
        ...(callbackPath === undefined ? [] : [createOAuthCallbackController(callbackPath)]),
        ...(metadataPath === undefined ? [] : [createOAuthClientMetadataController(metadataPath)]),
      ],
      exports: [McpClientService, McpOAuthService, MCP_CLIENT_OPTIONS, MCP_TRANSPORT_FACTORIES, MCP_CLIENT_RETENTION],
    };
  }
}
