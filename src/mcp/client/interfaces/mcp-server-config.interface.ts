import type { HttpRetryOptions } from '../transports/http.options';
import type { StdioPoolOptions } from '../transports/stdio.options';

/**
 * Whose remote session a call continues: `shared` (one session per server for the whole app) or
 * `principal` (one per `scopeKey` a caller passes, e.g. a user id).
 */
export type McpServerScope = 'shared' | 'principal';

/** Settings every server entry may carry. */
export interface McpServerCommonConfig {
  /** Reserved: the protocol revision to speak with this server. */
  version?: string;
  /**
   * Whose remote session a call continues.
   * @default 'shared'
   */
  scope?: McpServerScope;
  /**
   * Deadline of one call in ms (spawn and handshake included); a call's own `timeoutMs` wins.
   * @default the client's `defaultTimeoutMs`
   */
  timeoutMs?: number;
}

/** A local server started as a child process (never through a shell). */
export interface McpStdioServerConfig extends McpServerCommonConfig {
  /** @default 'stdio' when `command` is present */
  transport?: 'stdio';
  /**
   * The argv array, e.g. `['node', 'server.js']`; or, Claude-Desktop style, one program name
   * with its arguments in `args`. A shell command line is refused.
   */
  command: string[] | string;
  /** Arguments, when `command` is a single program name. */
  args?: string[];
  /** Extra environment of the child. */
  env?: Record<string, string>;
  /** Working directory of the child. */
  cwd?: string;
  /** The server keeps no state between requests (required by `pool`). @default false */
  stateless?: boolean;
  /** Opt-in warm pool of processes per worker (needs `stateless: true`). */
  pool?: StdioPoolOptions;
}

/** A remote server reached over Streamable HTTP. */
export interface McpHttpServerConfig extends McpServerCommonConfig {
  /** @default 'http' when `url` is present */
  transport?: 'http';
  /** The MCP endpoint, e.g. `https://example.com/mcp`. */
  url: string;
  /** Extra headers sent on every request. */
  headers?: Record<string, string>;
  /** Sent as `Authorization: Bearer <token>`; never logged or stored. */
  bearerToken?: string;
  /** Retries inside one delivery (connection refused, 429, 5xx). */
  retry?: HttpRetryOptions;
}

/** A toolset of this app (a mount), reached in-process through its message handler. */
export interface McpToolsetServerConfig extends McpServerCommonConfig {
  transport: 'toolset';
  /** The mount whose toolset to call. @default 'default' */
  mount?: string;
  /** Who the calls are made as: a principal key (also the label) or `{ key, label }`. */
  principal: string | { key: string; label?: string };
}

/** One configured MCP server. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig | McpToolsetServerConfig;

/** A server entry after validation: the transport is always named and stdio argv is an array. */
export type McpResolvedServerConfig =
  | (Omit<McpStdioServerConfig, 'command' | 'args'> & { transport: 'stdio'; command: string[] })
  | (McpHttpServerConfig & { transport: 'http' })
  | McpToolsetServerConfig;
