import type { McpStdioServerConfig } from '../../interfaces/mcp-server-config.interface';

/** Options of the stdio transport, and their defaults. */

/** Configuration of one stdio MCP server. */
export interface StdioTransportOptions {
  /**
   * The program and its arguments, e.g. `['node', 'server.js']`. Never a shell string: the
   * process is started without a shell. Build it from `{ command, args }` with `toStdioArgv`.
   */
  command: readonly string[];
  /**
   * Extra environment of the child. The child inherits only HOME, LOGNAME, PATH, SHELL, TERM and
   * USER from this process; these entries are added on top (and win).
   * @default {}
   */
  env?: Record<string, string>;
  /** Working directory of the child. @default the current directory */
  cwd?: string;
  /**
   * Deadline of one call in ms, spawn and handshake included. The context's `timeoutMs`, when
   * smaller, wins, and its `deadlineAt`, when sooner.
   * @default 30_000
   */
  timeoutMs?: number;
  /** Declares that the server keeps no state between requests; required by `pool`. @default false */
  stateless?: boolean;
  /** Opt-in warm pool (needs `stateless: true`). Without it every call spawns its own process. */
  pool?: McpStdioServerConfig.Pool;
  /** The session revision asked for in `initialize`. @default '2025-11-25' */
  protocolVersion?: string;
  /** Sent as `clientInfo` in `initialize`. @default { name: 'durable-mcp', version: '0.1.0' } */
  clientInfo?: { name: string; version: string; [key: string]: unknown };
  /**
   * Client capabilities sent in `initialize`. By default roots, sampling and elicitation are
   * declared when the call's context has an `onServerRequest` handler, and nothing otherwise.
   */
  clientCapabilities?: Record<string, unknown>;
  /** Shutdown: how long to wait for an exit after closing stdin, before SIGTERM. @default 2000 */
  closeGraceMs?: number;
  /**
   * Shutdown: how long to wait for an exit after SIGTERM, before SIGKILL. Also what the
   * supervisor waits between SIGTERM and SIGKILL when this process died.
   * @default 2000
   */
  killGraceMs?: number;
  /** How much of the end of stderr is kept for the result and errors, in bytes. @default 8192 */
  stderrLimitBytes?: number;
  /** Longest stdout line (one message) accepted, in characters. @default 67108864 */
  maxMessageChars?: number;
  /**
   * Called with the pid of every server process, once it runs (for supervision and tests). On
   * POSIX that is the server itself, not the supervisor between it and this process.
   */
  onSpawn?: (pid: number) => void;
}

/** `StdioTransportOptions` with every default applied. */
export interface ResolvedStdioOptions {
  command: readonly string[];
  env: Record<string, string>;
  cwd: string | undefined;
  timeoutMs: number;
  pool: Required<McpStdioServerConfig.Pool> | null;
  clientInfo: { name: string; version: string; [key: string]: unknown };
  protocolVersion: string;
  clientCapabilities: Record<string, unknown> | undefined;
  closeGraceMs: number;
  killGraceMs: number;
  stderrLimitBytes: number;
  maxMessageChars: number;
  onSpawn: ((pid: number) => void) | undefined;
}

/** Default deadline of one call. */
export const DEFAULT_STDIO_TIMEOUT_MS = 30_000;
/** Default waits of the shutdown sequence. */
export const DEFAULT_STDIO_CLOSE_GRACE_MS = 2_000;
/** Default wait between SIGTERM and SIGKILL. */
export const DEFAULT_STDIO_KILL_GRACE_MS = 2_000;
/** Default size of the captured end of stderr. */
export const DEFAULT_STDIO_STDERR_LIMIT_BYTES = 8 * 1024;
/** Default longest stdout line. */
export const DEFAULT_STDIO_MAX_MESSAGE_CHARS = 64 * 1024 * 1024;
/** Default number of invalid stdout lines after which a pooled process is replaced. */
export const DEFAULT_STDIO_POOL_MAX_INVALID_LINES = 10;
/** Default `clientInfo`. */
export const DEFAULT_STDIO_CLIENT_INFO = { name: 'durable-mcp', version: '0.1.0' } as const;
