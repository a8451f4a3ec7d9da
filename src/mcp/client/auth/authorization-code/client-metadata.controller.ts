import { Controller, Get, Inject, Res, type OnModuleInit, type Type } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { McpConfigurationError } from '../../../errors/mcp-configuration.errors';
import type { McpResolvedClientOptions } from '../../config/client-options-resolver';
import { MCP_CLIENT_OPTIONS } from '../../mcp-client.constants';
import { AuthorizationCodeAuth } from './authorization-code.auth';
import { publicClientMetadata } from './registration-request';

/**
 * The Client ID Metadata Document of the app: `client_id` is the `clientMetadataUrl` its
 * `authorizationCode` servers name (one for all), with `oauth.redirectUri` and `oauth.clientName`,
 * as a public client of the authorization code flow (PKCE) with refresh tokens.
 * @throws McpConfigurationError when no server names a `clientMetadataUrl`, or they name several
 */
export function clientMetadataDocument(options: McpResolvedClientOptions): Record<string, unknown> {
  const urls = new Set<string>();
  for (const config of Object.values(options.servers)) {
    const { auth } = config as { auth?: unknown };
    if (auth instanceof AuthorizationCodeAuth && auth.options.clientMetadataUrl !== undefined)
      urls.add(auth.options.clientMetadataUrl);
  }
  if (urls.size !== 1)
    throw new McpConfigurationError(
      urls.size === 0
        ? 'McpClientModule: oauthClientMetadataPath serves a Client ID Metadata Document, but no server names it: give their authorizationCode() the clientMetadataUrl it is reached at, or remove oauthClientMetadataPath'
        : `McpClientModule: oauthClientMetadataPath serves one Client ID Metadata Document, but the servers name several clientMetadataUrl (${[...urls].join(', ')}): give them all the URL of that path`,
    );
  const [clientId] = urls;
  return {
    client_id: clientId,
    ...publicClientMetadata(options.oauth.redirectUri as string, options.oauth.clientName),
  };
}

/**
 * The route serving the Client ID Metadata Document at `path` (`oauthClientMetadataPath`), as
 * JSON that caches may keep a few minutes. Works on Express and Fastify (through the adapter).
 */
export function createOAuthClientMetadataController(path: string): Type<unknown> {
  @Controller(path)
  class McpOAuthClientMetadataController implements OnModuleInit {
    private document = '';

    constructor(
      @Inject(MCP_CLIENT_OPTIONS) private readonly options: McpResolvedClientOptions,
      private readonly host: HttpAdapterHost,
    ) {}

    /** Builds the document once, refusing to boot on a configuration that cannot serve one. */
    onModuleInit(): void {
      this.document = JSON.stringify(clientMetadataDocument(this.options));
    }

    @Get()
    serve(@Res() response: object): void {
      const adapter = this.host.httpAdapter;
      adapter.setHeader(response, 'Content-Type', 'application/json');
      adapter.setHeader(response, 'Cache-Control', 'public, max-age=300');
      adapter.reply(response, this.document, 200);
    }
  }
  return McpOAuthClientMetadataController;
}
