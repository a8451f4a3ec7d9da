import {
  isSupportedSessionVersion,
  LATEST_SESSION_PROTOCOL_VERSION,
  SESSION_PROTOCOL_VERSIONS,
} from '../../../protocol/revisions';
import { assertKnownOptions, McpConfigurationError, optionKeys } from '../../../errors/mcp-configuration.errors';
import { assertStdioArgv } from './stdio-argv';
import { invalidStdioOptionMessage, poolNeedsStatelessMessage } from './stdio.messages';
import {
  DEFAULT_STDIO_CLIENT_INFO,
  DEFAULT_STDIO_CLOSE_GRACE_MS,
  DEFAULT_STDIO_KILL_GRACE_MS,
  DEFAULT_STDIO_MAX_MESSAGE_CHARS,
  DEFAULT_STDIO_POOL_MAX_INVALID_LINES,
  DEFAULT_STDIO_STDERR_LIMIT_BYTES,
  DEFAULT_STDIO_TIMEOUT_MS,
  type ResolvedStdioOptions,
  type StdioTransportOptions,
} from './stdio.options';
import type { McpStdioServerConfig } from '../../interfaces/mcp-server-config.interface';

/** The keys of `McpStdioServerConfig.Pool`. */
export const STDIO_POOL_OPTION_KEYS = optionKeys<McpStdioServerConfig.Pool>({
  max: true,
  idleMs: true,
  maxInvalidLines: true,
});

const STDIO_OPTION_KEYS = optionKeys<StdioTransportOptions>({
  command: true,
  env: true,
  cwd: true,
  timeoutMs: true,
  stateless: true,
  pool: true,
  protocolVersion: true,
  clientInfo: true,
  clientCapabilities: true,
  closeGraceMs: true,
  killGraceMs: true,
  stderrLimitBytes: true,
  maxMessageChars: true,
  onSpawn: true,
});

function fail(option: string, expected: string): never {
  throw new McpConfigurationError(invalidStdioOptionMessage(option, expected));
}

function positive(option: string, value: unknown, fallback: number, allowZero = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    fail(option, allowZero ? 'a finite number >= 0' : 'a finite number > 0');
  }
  return value;
}

function resolveEnv(env: unknown): Record<string, string> {
  if (env === undefined) return {};
  if (typeof env !== 'object' || env === null || Array.isArray(env)) fail('env', 'an object of string values');
  for (const [key, value] of Object.entries(env)) {
    if (
      typeof value !== 'string' ||
      key.length === 0 ||
      key.includes('=') ||
      key.includes('\0') ||
      value.includes('\0')
    ) {
      fail(`env.${key}`, 'a string, under a name without "=" or NUL characters');
    }
  }
  return { ...(env as Record<string, string>) };
}

function resolvePool(options: StdioTransportOptions): Required<McpStdioServerConfig.Pool> | null {
  const pool: unknown = options.pool;
  if (pool === undefined || pool === null) return null;
  if (typeof pool !== 'object') fail('pool', 'an object { max, idleMs }');
  if (options.stateless !== true) throw new McpConfigurationError(poolNeedsStatelessMessage());
  const { max, idleMs, maxInvalidLines } = pool as McpStdioServerConfig.Pool;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1) fail('pool.max', 'an integer >= 1');
  if (idleMs === undefined) fail('pool.idleMs', 'a finite number > 0');
  return {
    max,
    idleMs: positive('pool.idleMs', idleMs, Number.NaN),
    maxInvalidLines: positive('pool.maxInvalidLines', maxInvalidLines, DEFAULT_STDIO_POOL_MAX_INVALID_LINES, true),
  };
}

/**
 * Validates options and applies the defaults. Every mistake is reported at construction with a
 * message that says how to fix it.
 * @throws McpConfigurationError
 */
export function resolveStdioOptions(options: StdioTransportOptions): ResolvedStdioOptions {
  if (typeof options !== 'object' || options === null) fail('options', 'an object with at least { command: [...] }');
  assertKnownOptions(options, STDIO_OPTION_KEYS, 'StdioTransport');
  assertKnownOptions(options.pool, STDIO_POOL_OPTION_KEYS, 'StdioTransport option "pool"');
  assertStdioArgv(options.command);
  if (options.cwd !== undefined && (typeof options.cwd !== 'string' || options.cwd.length === 0))
    fail('cwd', 'a non-empty path');
  if (options.stateless !== undefined && typeof options.stateless !== 'boolean') fail('stateless', 'a boolean');
  const info = options.clientInfo;
  if (info !== undefined && (typeof info?.name !== 'string' || typeof info?.version !== 'string')) {
    fail('clientInfo', 'an object { name: string, version: string }');
  }
  if (options.protocolVersion !== undefined && !isSupportedSessionVersion(options.protocolVersion)) {
    fail('protocolVersion', `one of ${SESSION_PROTOCOL_VERSIONS.join(', ')}`);
  }
  const caps = options.clientCapabilities;
  if (caps !== undefined && (typeof caps !== 'object' || caps === null || Array.isArray(caps)))
    fail('clientCapabilities', 'an object');
  if (options.onSpawn !== undefined && typeof options.onSpawn !== 'function')
    fail('onSpawn', 'a function (pid) => void');
  return {
    command: [...options.command],
    env: resolveEnv(options.env),
    cwd: options.cwd,
    timeoutMs: positive('timeoutMs', options.timeoutMs, DEFAULT_STDIO_TIMEOUT_MS),
    pool: resolvePool(options),
    clientInfo: info ? { ...info } : { ...DEFAULT_STDIO_CLIENT_INFO },
    protocolVersion: options.protocolVersion ?? LATEST_SESSION_PROTOCOL_VERSION,
    clientCapabilities: caps ? { ...caps } : undefined,
    closeGraceMs: positive('closeGraceMs', options.closeGraceMs, DEFAULT_STDIO_CLOSE_GRACE_MS, true),
    killGraceMs: positive('killGraceMs', options.killGraceMs, DEFAULT_STDIO_KILL_GRACE_MS, true),
    stderrLimitBytes: positive('stderrLimitBytes', options.stderrLimitBytes, DEFAULT_STDIO_STDERR_LIMIT_BYTES, true),
    maxMessageChars: positive('maxMessageChars', options.maxMessageChars, DEFAULT_STDIO_MAX_MESSAGE_CHARS),
    onSpawn: options.onSpawn,
  };
}
