import type { Type } from '@nestjs/common';
import type { McpClientOptions } from '../client/interfaces/mcp-client-options.interface';
import type { McpAuthorizeFn, McpAuthorizer } from './principal.interface';

/** Identity the server announces in its `initialize` result. */
export interface McpServerInfoOptions {
  /** @default 'durable-mcp' */
  name?: string;
  /** @default the package version */
  version?: string;
  /** Optional instructions the client may show to its model. */
  instructions?: string;
  /** Optional human-readable title. */
  title?: string;
}

/** Inbound session settings. */
export interface McpSessionOptions {
  /**
   * A session not used for this long answers 404, like an unknown one.
   * @default 3_600_000 (one hour)
   */
  idleTtlMs?: number;
}

/**
 * Options of one MCP mount, given to `McpModule.forRoot` or returned by the `forRootAsync`
 * factory.
 */
export interface McpModuleOptions {
  /**
   * Required. Accepts or rejects bearer tokens: a function `(token, request) => principal | null`
   * or an injectable class with an `authorize` method (resolved through DI, so it must be a
   * provider the module can see). There is no default: a mount without auth does not boot.
   * Not needed (and ignored) when the mount does not serve (`serve: false`).
   */
  auth?: McpAuthorizeFn | Type<McpAuthorizer>;
  /** Identity and instructions announced by `initialize`. */
  server?: McpServerInfoOptions;
  /**
   * Which providers' `@McpTool` methods this mount serves.
   * @default every provider of the app that has `@McpTool` methods
   */
  providers?: Type<unknown>[];
  /** Session settings. */
  sessions?: McpSessionOptions;
  /**
   * Origins allowed to call the endpoint from a browser (DNS-rebinding protection). Requests
   * without an `Origin` header are always allowed. `'*'` allows every origin.
   * @default localhost, 127.0.0.1 and [::1] on any port
   */
  allowedOrigins?: string[] | '*';
  /**
   * Largest accepted request body, in bytes; larger bodies get 413.
   * @default 4_194_304 (4 MiB)
   */
  maxBodyBytes?: number;
  /**
   * Page size of `tools/list`.
   * @default 100
   */
  pageSize?: number;
  /**
   * The MCP client of the app (`McpClientService`): servers to call and how calls run. Give it
   * to one mount per app.
   */
  client?: McpClientOptions;
}

/** Synchronous options that shape the module graph; they cannot come from an async factory. */
export interface McpModuleExtras {
  /**
   * Name of this mount; several mounts in one app need distinct names.
   * @default 'default'
   */
  mount: string;
  /**
   * HTTP path of the endpoint.
   * @default '/mcp'
   */
  path: string;
  /**
   * Register the module globally.
   * @default false
   */
  isGlobal: boolean;
  /**
   * Serve an MCP endpoint. False makes a client-only (or worker-only) mount: no controller, no
   * toolset and no `auth` requirement.
   * @default true
   */
  serve: boolean;
}
