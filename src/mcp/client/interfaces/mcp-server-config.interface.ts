import type { Type } from '@nestjs/common';
import type { McpClientAuth } from '../auth/mcp-client-auth.interface';

/**
 * Whose remote session a call continues: `shared` (one session per server for the whole app) or
 * `principal` (one per `scopeKey` a caller passes, e.g. a user id).
 */
export type McpServerScope = 'shared' | 'principal';

/**
 * The protocol revision to speak with a server: `'auto'` (probe with `server/discover`, fall back
 * to the `initialize` handshake), the stateless `'2026-07-28'`, or a session revision
 * (`'2025-11-25'`, `'2025-06-18'`, `'2025-03-26'`) asked for in `initialize`.
 */
export type McpServerVersion = 'auto' | '2026-07-28' | '2025-11-25' | '2025-06-18' | '2025-03-26';

/** Settings every server entry may carry. */
export interface McpServerCommonConfig {
  /**
   * The protocol revision to speak with this server. `'auto'` probes once per endpoint (HTTP URL,
   * or stdio argv and cwd) and remembers the verdict in this process and with the outbound
   * session, so other workers reuse it. Ignored by `transport: 'toolset'` (in-process).
   * @default 'auto'
   */
  version?: McpServerVersion;
  /**
   * How long the `server/discover` probe of `version: 'auto'` may take before the server is taken
   * for a 2025-era one, in ms (spawn included on stdio). A call's own deadline, when shorter, wins.
   * @default 10_000
   */
  probeTimeoutMs?: number;
  /**
   * Whose remote session a call continues.
   * @default 'shared'
   */
  scope?: McpServerScope;
  /**
   * Deadline of one call in ms (spawn and handshake included); a call's own `timeoutMs` wins.
   * @default (the client's `defaultTimeoutMs`)
   */
  timeoutMs?: number;
  /**
   * Client capabilities to announce on this server's shared handshakes (a 2025 HTTP session, a
   * pooled stdio process) besides those of the app's `@McpClientHandler` handlers: for requests
   * that a call's own `onServerRequest` answers (the gateway's callers), from servers that check
   * the client's capabilities before they ask or list. A request outside such a call, with no
   * handler for it, gets -32601 (method not found).
   * @default {}
   */
  announce?: McpServerCommonConfig.Announce;
}

/** The parts of `McpServerCommonConfig`: `McpServerCommonConfig.Announce` is the type of `announce`. */
export declare namespace McpServerCommonConfig {
  /** The client capabilities a server's shared handshakes announce (`true` announces one). */
  export interface Announce {
    /** Form elicitation (`elicitation/create`). @default false */
    elicitation?: boolean;
    /** Sampling (`sampling/createMessage`). @default false */
    sampling?: boolean;
    /** Roots (`roots/list`). @default false */
    roots?: boolean;
  }
}

/** A local server started as a child process (never through a shell). */
export interface McpStdioServerConfig extends McpServerCommonConfig {
  /**
   * The transport.
   * @default ('stdio' when `command` is present)
   */
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
  pool?: McpStdioServerConfig.Pool;
  /**
   * Shutdown: how long to wait for the child to exit after its stdin is closed, before SIGTERM.
   * Raise it for a server that needs longer to finish its work on EOF (a Nest app ending its
   * session, for example).
   * @default 2000
   */
  closeGraceMs?: number;
  /**
   * Shutdown: how long to wait for an exit after SIGTERM, before SIGKILL.
   * @default 2000
   */
  killGraceMs?: number;
}

/** A remote server reached over Streamable HTTP. */
export interface McpHttpServerConfig extends McpServerCommonConfig {
  /**
   * The transport.
   * @default ('http' when `url` is present)
   */
  transport?: 'http';
  /** The MCP endpoint, e.g. `https://example.com/mcp`. */
  url: string;
  /** Extra headers sent on every request. */
  headers?: Record<string, string>;
  /** Sent as `Authorization: Bearer <token>`; never logged or stored (same as `auth: staticToken(token)`). */
  bearerToken?: string;
  /**
   * Where bearer tokens come from: `staticToken(token)`, `clientCredentials({...})`, an object
   * implementing `McpClientAuth`, or an injectable class implementing it (register it as a
   * provider of the app; it is resolved through DI). Wins over `bearerToken`.
   */
  auth?: McpClientAuth | Type<McpClientAuth>;
  /** Retries inside one delivery (connection refused, 429, 5xx). */
  retry?: McpHttpServerConfig.Retry;
  /**
   * Largest response body read, in bytes (see `HttpTransportOptions.maxResponseBytes`).
   * @default 16_777_216 (16 MiB)
   */
  maxResponseBytes?: number;
  /**
   * Largest server-sent event, in characters (see `HttpTransportOptions.maxEventChars`).
   * @default 16_777_216
   * @unit characters
   */
  maxEventChars?: number;
}

/** A toolset of this app (a mount), reached in-process through its message handler. */
export interface McpToolsetServerConfig extends McpServerCommonConfig {
  /** Names the in-process transport: required, a toolset entry has no `command` or `url` to infer it from. */
  transport: 'toolset';
  /** The mount whose toolset to call. @default 'default' */
  mount?: string;
  /** Who the calls are made as: a principal key (also the label) or `{ key, label }`. */
  principal: string | { key: string; label?: string };
}

/**
 * A server reached through a transport the app registered (`McpClientModule.forRoot({ transports })`):
 * `transport` names its factory, which checks the other fields.
 */
export interface McpCustomServerConfig extends McpServerCommonConfig {
  /** The `transport` name of a registered `McpTransportFactory`. */
  transport: string;
  /** Settings read by that factory. */
  [setting: string]: unknown;
}

/** One configured MCP server. */
export type McpServerConfig =
  McpStdioServerConfig | McpHttpServerConfig | McpToolsetServerConfig | McpCustomServerConfig;

/** A stdio entry after validation: the argv is an array. */
export type McpResolvedStdioServerConfig = Omit<McpStdioServerConfig, 'command' | 'args'> & {
  transport: 'stdio';
  command: string[];
};

/** A server entry after validation: the transport is always named and stdio argv is an array. */
export type McpResolvedServerConfig =
  | McpResolvedStdioServerConfig
  | (McpHttpServerConfig & { transport: 'http' })
  | McpToolsetServerConfig
  | McpCustomServerConfig;

/** The parts of `McpHttpServerConfig`: `McpHttpServerConfig.Retry` is the type of `retry`. */
export declare namespace McpHttpServerConfig {
  /** Backoff of the retries `HttpTransport` makes inside one `deliver`. */
  export interface Retry {
    /**
     * How many times a failed delivery is tried again (connection errors, HTTP 429 and 5xx).
     * `tools/call` is only tried again when the connection was refused before anything was sent.
     * @default 2
     */
    retries?: number;
    /** Delay before the first retry, doubled for each further one, in ms. @default 100 */
    initialDelayMs?: number;
    /** Upper bound of one delay, in ms. @default 2000 */
    maxDelayMs?: number;
  }
}

/** The parts of `McpStdioServerConfig`: `McpStdioServerConfig.Pool` is the type of `pool`. */
export declare namespace McpStdioServerConfig {
  /** Keeps warm, initialized server processes and reuses them across calls. */
  export interface Pool {
    /** Most processes kept for this transport; each serves one request at a time. */
    max: number;
    /** A process idle for this long is shut down. */
    idleMs: number;
    /**
     * A process that has written this many stdout lines that are not JSON-RPC messages is replaced
     * after its call (a server that keeps breaking the framing cannot be trusted with the next one).
     * @default 10
     */
    maxInvalidLines?: number;
  }
}
