import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  MCP_ENTITIES,
  McpClientModule,
  type McpClientAuth,
  type McpClientHandlers,
  type McpOAuthEncryptionKey,
  type McpServerConfig,
} from '../../../src/mcp';

/** The one server the conformance client talks to. */
export const TARGET = 'target';

/** What a scenario needs from the client app. */
export interface ClientAppOptions {
  /** The scenario server's URL (the CLI's last argument). */
  url: string;
  /** Protocol revision to speak; `'auto'` lets the client probe. */
  version: NonNullable<McpServerConfig['version']>;
  /** Answers to server->client requests (elicitation, sampling, roots). */
  handlers?: McpClientHandlers;
  /** How the client gets its bearer token (OAuth scenarios); none by default. */
  auth?: McpClientAuth;
  /**
   * User-delegated OAuth (`authorizationCode`): the server entry gets `scope: 'principal'`, and
   * the module these settings (the redirect URI the user agent is sent back to, sealing keys).
   */
  userOAuth?: { redirectUri: string; encryptionKeys: McpOAuthEncryptionKey[] };
}

/**
 * A client-only Nest app: `McpClientModule.forRoot({ servers, handlers })` with one HTTP server,
 * calls run inline, state (outbound sessions, events) in an in-memory SQLite database.
 */
@Module({})
export class ClientAppModule {
  static forTarget(options: ClientAppOptions): DynamicModule {
    return {
      module: ClientAppModule,
      imports: [
        TypeOrmModule.forRoot({
          type: 'better-sqlite3',
          database: ':memory:',
          entities: MCP_ENTITIES,
          synchronize: true,
        }),
        McpClientModule.forRoot({
          servers: {
            [TARGET]: {
              url: options.url,
              version: options.version,
              timeoutMs: 10_000,
              ...(options.auth ? { auth: options.auth } : {}),
              ...(options.userOAuth ? { scope: 'principal' as const } : {}),
            },
          },
          handlers: options.handlers,
          ...(options.userOAuth ? { oauth: options.userOAuth } : {}),
        }),
      ],
    };
  }
}
