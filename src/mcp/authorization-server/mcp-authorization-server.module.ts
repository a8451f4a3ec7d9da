import { Module, type DynamicModule, type FactoryProvider, type ModuleMetadata, type Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { MCP_AUTHORIZATION_SERVER_ISSUER } from '../mcp.constants';
import { McpProtectedResourceRootModule } from '../server/oauth/protected-resource-root.module';
import {
  resolveAuthorizationServerOptions,
  type McpAuthorizationServerOptions,
  type McpResolvedAuthorizationServerOptions,
} from './authorization-server.options';
import {
  MCP_AUTHORIZATION_SERVER_DATA_SOURCE,
  MCP_AUTHORIZATION_SERVER_OPTIONS,
} from './authorization-server.constants';
import { McpAuthorizationServer } from './authorization-server.service';

/** `McpAuthorizationServerModule.forRootAsync` options: the options from a factory (e.g. of `ConfigService`). */
export interface McpAuthorizationServerAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** Builds the options. */
  useFactory: (...args: any[]) => McpAuthorizationServerOptions | Promise<McpAuthorizationServerOptions>; // eslint-disable-line @typescript-eslint/no-explicit-any -- Nest's factory signature
  /** What the factory is given. */
  inject?: FactoryProvider['inject'];
}

/**
 * Makes the app the OAuth 2.1 authorization server of its own mounts, on `oidc-provider` (an
 * optional peer dependency): authorization code with PKCE, refresh tokens, dynamic client
 * registration (RFC 7591), Client ID Metadata Documents, RFC 8414 metadata, a JWKS of keys kept
 * in the database, and JWT access tokens bound to a mount's resource (RFC 8707). Users sign in at
 * an upstream identity provider (OpenID Connect or GitHub); the host maps them to principals.
 *
 * Global: a mount whose `oauth` option lists no `authorizationServers` names this issuer in its
 * Protected Resource Metadata, and its `JwtVerifier` accepts the tokens. State (clients, grants,
 * sessions, codes, tokens, keys) lives in `mcp_oauth_provider_records` through the host's
 * TypeORM `DataSource`, so every replica serves the same server.
 */
@Module({})
export class McpAuthorizationServerModule {
  /** The authorization server with these options. */
  static forRoot(options: McpAuthorizationServerOptions): DynamicModule {
    return McpAuthorizationServerModule.build([], {
      provide: MCP_AUTHORIZATION_SERVER_OPTIONS,
      useValue: resolveAuthorizationServerOptions(options),
    });
  }

  /** The authorization server with options a factory gives. */
  static forRootAsync(options: McpAuthorizationServerAsyncOptions): DynamicModule {
    return McpAuthorizationServerModule.build(options.imports ?? [], {
      provide: MCP_AUTHORIZATION_SERVER_OPTIONS,
      useFactory: async (...args: unknown[]) => resolveAuthorizationServerOptions(await options.useFactory(...args)),
      inject: options.inject ?? [],
    });
  }

  private static build(imports: NonNullable<ModuleMetadata['imports']>, options: Provider): DynamicModule {
    return {
      module: McpAuthorizationServerModule,
      global: true,
      imports: [...imports, McpProtectedResourceRootModule],
      providers: [
        options,
        {
          provide: MCP_AUTHORIZATION_SERVER_ISSUER,
          useFactory: (resolved: McpResolvedAuthorizationServerOptions) => resolved.issuer,
          inject: [MCP_AUTHORIZATION_SERVER_OPTIONS],
        },
        { provide: MCP_AUTHORIZATION_SERVER_DATA_SOURCE, useExisting: getDataSourceToken() },
        McpAuthorizationServer,
      ],
      exports: [McpAuthorizationServer, MCP_AUTHORIZATION_SERVER_ISSUER],
    };
  }
}
