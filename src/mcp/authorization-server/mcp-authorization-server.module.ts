import { Module, type ConfigurableModuleAsyncOptions, type DynamicModule } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { MCP_AUTHORIZATION_SERVER_ISSUER } from '../mcp.constants';
import { McpProtectedResourceRootModule } from '../server/oauth/protected-resource-root.module';
import {
  resolveAuthorizationServerOptions,
  type McpAuthorizationServerModuleOptions,
  type McpResolvedAuthorizationServerOptions,
} from './authorization-server.options';
import {
  MCP_AUTHORIZATION_SERVER_DATA_SOURCE,
  MCP_AUTHORIZATION_SERVER_OPTIONS,
} from './authorization-server.constants';
import { McpAuthorizationServer } from './authorization-server.service';
import {
  MCP_AUTHORIZATION_SERVER_RAW_OPTIONS,
  McpAuthorizationServerConfigurableModule,
} from './mcp-authorization-server.module-definition';

/**
 * Makes the app the OAuth 2.1 authorization server of its own mounts, on `oidc-provider` (an
 * optional peer dependency): authorization code with PKCE, refresh tokens, dynamic client
 * registration (RFC 7591), Client ID Metadata Documents, RFC 8414 metadata, a JWKS of keys kept
 * in the database (sealed with `encryptionKeys`), and JWT access tokens bound to a mount's
 * resource (RFC 8707). Users sign in at an upstream identity provider (OpenID Connect or GitHub);
 * the host maps them to principals.
 *
 * Global: a mount whose `oauth` option lists no `authorizationServers` names this issuer in its
 * Protected Resource Metadata, and its `JwtVerifier` accepts the tokens. State (clients, grants,
 * sessions, codes, tokens, keys) lives in `mcp_oauth_provider_records` through the host's
 * TypeORM `DataSource`, so every replica serves the same server.
 */
@Module({})
export class McpAuthorizationServerModule {
  /** The authorization server with these options, checked at once (a mistake fails before the app is built). */
  static forRoot(options: McpAuthorizationServerModuleOptions): DynamicModule {
    resolveAuthorizationServerOptions(options);
    return McpAuthorizationServerModule.complete(McpAuthorizationServerConfigurableModule.forRoot(options));
  }

  /** The authorization server with options from a factory (`useFactory`), a class (`useClass`) or an existing provider (`useExisting`). */
  static forRootAsync(
    options: ConfigurableModuleAsyncOptions<McpAuthorizationServerModuleOptions, 'createMcpAuthorizationServerOptions'>,
  ): DynamicModule {
    return McpAuthorizationServerModule.complete(McpAuthorizationServerConfigurableModule.forRootAsync(options));
  }

  private static complete(definition: DynamicModule): DynamicModule {
    return {
      ...definition,
      module: McpAuthorizationServerModule,
      global: true,
      imports: [...(definition.imports ?? []), McpProtectedResourceRootModule],
      providers: [
        ...(definition.providers ?? []),
        {
          provide: MCP_AUTHORIZATION_SERVER_OPTIONS,
          useFactory: (raw: McpAuthorizationServerModuleOptions) => resolveAuthorizationServerOptions(raw),
          inject: [MCP_AUTHORIZATION_SERVER_RAW_OPTIONS],
        },
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
