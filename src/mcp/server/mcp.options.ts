import type { McpModuleExtras, McpModuleOptions, McpSessionOptions } from './interfaces/mcp-module-options.interface';
import {
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_PAGE_SIZE,
  DEFAULT_SESSION_IDLE_TTL_MS,
} from '../mcp.constants';
import { assertKnownOptions, McpConfigurationError, optionKeys } from '../errors/mcp-configuration.errors';
import { invalidAuthMessage, invalidOptionMessage, missingAuthMessage } from '../mcp.messages';
import { DEFAULT_DATABASE_TIMEOUT_MS } from '../persistence/database-deadline';
import { resolveAuditCommit } from '../persistence/audit-commit';
import { DEFAULT_STREAM_OPTIONS, type McpResolvedStreamOptions } from './http/mcp-stream.options';
import { DEFAULT_LIMITS, type McpResolvedLimits } from './mcp-limits.options';
import {
  DEFAULT_SESSION_CACHE,
  type McpResolvedSessionCache,
  type McpSessionCacheOptions,
} from './sessions/mcp-session-cache.options';
import { resolveOAuthOptions, type McpResolvedOAuthOptions } from './oauth/mcp-oauth.options';
import { resolveTasksOptions, type McpResolvedTasksOptions } from './tasks/mcp-tasks.options';
import { resolveShutdownOptions, type McpResolvedShutdownOptions } from './shutdown/mcp-shutdown.options';
import { resolveTelemetryOptions, type McpResolvedTelemetryOptions } from '../telemetry/mcp-telemetry.options';
import { resolveMountRetention, type McpResolvedRetention } from '../persistence/retention/mcp-retention.options';

/** A mount's options after defaults were applied and the configuration was checked. */
export interface McpResolvedOptions extends Omit<
  McpModuleOptions,
  | 'auth'
  | 'anonymous'
  | 'sessions'
  | 'database'
  | 'audit'
  | 'maxBodyBytes'
  | 'bodyTimeoutMs'
  | 'pageSize'
  | 'streams'
  | 'limits'
  | 'oauth'
  | 'tasks'
  | 'shutdown'
  | 'telemetry'
  | 'retention'
> {
  /** The authorizer. */
  auth: NonNullable<McpModuleOptions['auth']>;
  /** Whether requests without a token are admitted as the anonymous principal. */
  anonymous: boolean;
  mount: string;
  path: string;
  /** The idle TTL and the session cache (`false` when off), defaults applied. */
  sessions: { idleTtlMs: number; cache: McpResolvedSessionCache };
  database: { timeoutMs: number };
  /** How audit rows commit (`audit.commit`, default `'sync'`). */
  audit: { commit: 'sync' | 'async' };
  maxBodyBytes: number;
  /** Deadline for receiving a request body, in milliseconds. */
  bodyTimeoutMs: number;
  pageSize: number;
  streams: McpResolvedStreamOptions;
  /** The caps of `limits`, defaults applied. */
  limits: McpResolvedLimits;
  /** The OAuth resource-server settings, when the mount has the `oauth` option. */
  oauth?: McpResolvedOAuthOptions;
  /** The `tasks` option, defaults applied. */
  tasks: McpResolvedTasksOptions;
  /** The `shutdown` option, defaults applied. */
  shutdown: McpResolvedShutdownOptions;
  /** The `telemetry` option, defaults applied. */
  telemetry: McpResolvedTelemetryOptions;
  /** The `retention` option checked; null: nothing is pruned. */
  retention: McpResolvedRetention | null;
}

/** The keys a mount reads; anything else is refused at boot (a typo would otherwise be ignored). */
const MODULE_OPTION_KEYS = optionKeys<McpModuleOptions>({
  auth: true,
  anonymous: true,
  server: true,
  providers: true,
  sessions: true,
  database: true,
  audit: true,
  allowedOrigins: true,
  maxBodyBytes: true,
  bodyTimeoutMs: true,
  pageSize: true,
  pubsub: true,
  tasks: true,
  retention: true,
  streams: true,
  limits: true,
  stateless: true,
  cache: true,
  oauth: true,
  shutdown: true,
  telemetry: true,
});

const SESSION_OPTION_KEYS = optionKeys<McpSessionOptions>({ idleTtlMs: true, cache: true });
const SESSION_CACHE_OPTION_KEYS = optionKeys<McpSessionCacheOptions>({ ttlMs: true, maxEntries: true });

function positiveInteger(mount: string, option: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) {
    throw new McpConfigurationError(invalidOptionMessage(mount, option, 'a positive integer'));
  }
  return value;
}

function resolveSessionCache(mount: string, cache: McpSessionOptions['cache']): McpResolvedSessionCache {
  if (cache === false) return false;
  if (cache === undefined || cache === true) return { ...DEFAULT_SESSION_CACHE };
  if (typeof cache !== 'object' || cache === null || Array.isArray(cache)) {
    throw new McpConfigurationError(
      invalidOptionMessage(mount, 'sessions.cache', 'true, false or { ttlMs?, maxEntries? }'),
    );
  }
  assertKnownOptions(cache, SESSION_CACHE_OPTION_KEYS, `McpModule (mount "${mount}") option "sessions.cache"`);
  return {
    ttlMs: positiveInteger(mount, 'sessions.cache.ttlMs', cache.ttlMs, DEFAULT_SESSION_CACHE.ttlMs),
    maxEntries: positiveInteger(mount, 'sessions.cache.maxEntries', cache.maxEntries, DEFAULT_SESSION_CACHE.maxEntries),
  };
}

/** Applies defaults and fails closed on a configuration that cannot work (no auth above all). */
export function resolveMcpOptions(
  options: McpModuleOptions | undefined,
  extras: Pick<McpModuleExtras, 'mount' | 'path'>,
): McpResolvedOptions {
  const { mount, path } = extras;
  assertKnownOptions(options, MODULE_OPTION_KEYS, `McpModule (mount "${mount}")`);
  if (!options || options.auth === undefined || options.auth === null) {
    throw new McpConfigurationError(missingAuthMessage(mount));
  }
  if (typeof options.auth !== 'function') {
    throw new McpConfigurationError(invalidAuthMessage(mount));
  }
  if (options.anonymous !== undefined && typeof options.anonymous !== 'boolean') {
    throw new McpConfigurationError(invalidOptionMessage(mount, 'anonymous', 'true or false'));
  }
  assertKnownOptions(options.sessions, SESSION_OPTION_KEYS, `McpModule (mount "${mount}") option "sessions"`);
  return {
    ...options,
    auth: options.auth,
    anonymous: options.anonymous ?? false,
    mount,
    path,
    sessions: {
      idleTtlMs: positiveInteger(mount, 'sessions.idleTtlMs', options.sessions?.idleTtlMs, DEFAULT_SESSION_IDLE_TTL_MS),
      cache: resolveSessionCache(mount, options.sessions?.cache),
    },
    database: {
      timeoutMs: positiveInteger(mount, 'database.timeoutMs', options.database?.timeoutMs, DEFAULT_DATABASE_TIMEOUT_MS),
    },
    audit: {
      commit: resolveAuditCommit(
        options.audit,
        (option, expected) => invalidOptionMessage(mount, option, expected),
        `McpModule (mount "${mount}")`,
      ),
    },
    maxBodyBytes: positiveInteger(mount, 'maxBodyBytes', options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES),
    bodyTimeoutMs: positiveInteger(mount, 'bodyTimeoutMs', options.bodyTimeoutMs, DEFAULT_BODY_TIMEOUT_MS),
    pageSize: positiveInteger(mount, 'pageSize', options.pageSize, DEFAULT_PAGE_SIZE),
    streams: {
      clientRequestTimeoutMs: positiveInteger(
        mount,
        'streams.clientRequestTimeoutMs',
        options.streams?.clientRequestTimeoutMs,
        DEFAULT_STREAM_OPTIONS.clientRequestTimeoutMs,
      ),
      keepAliveMs: positiveInteger(
        mount,
        'streams.keepAliveMs',
        options.streams?.keepAliveMs,
        DEFAULT_STREAM_OPTIONS.keepAliveMs,
      ),
      retryMs: positiveInteger(mount, 'streams.retryMs', options.streams?.retryMs, DEFAULT_STREAM_OPTIONS.retryMs),
      resumeEvents: positiveInteger(
        mount,
        'streams.resumeEvents',
        options.streams?.resumeEvents,
        DEFAULT_STREAM_OPTIONS.resumeEvents,
      ),
      resumeTtlMs: positiveInteger(
        mount,
        'streams.resumeTtlMs',
        options.streams?.resumeTtlMs,
        DEFAULT_STREAM_OPTIONS.resumeTtlMs,
      ),
      maxBufferedBytes: positiveInteger(
        mount,
        'streams.maxBufferedBytes',
        options.streams?.maxBufferedBytes,
        DEFAULT_STREAM_OPTIONS.maxBufferedBytes,
      ),
      resumeFollowers: positiveInteger(
        mount,
        'streams.resumeFollowers',
        options.streams?.resumeFollowers,
        DEFAULT_STREAM_OPTIONS.resumeFollowers,
      ),
    },
    oauth: resolveOAuthOptions(mount, path, options.oauth),
    shutdown: resolveShutdownOptions(mount, options.shutdown),
    telemetry: resolveTelemetryOptions(
      options.telemetry,
      (option, expected) => invalidOptionMessage(mount, option, expected),
      `McpModule (mount "${mount}")`,
    ),
    tasks: resolveTasksOptions(
      mount,
      options.tasks,
      options.pubsub?.redis,
      options.streams?.clientRequestTimeoutMs ?? DEFAULT_STREAM_OPTIONS.clientRequestTimeoutMs,
    ),
    retention: resolveMountRetention(mount, options.retention),
    limits: {
      sessionsPerPrincipal: positiveInteger(
        mount,
        'limits.sessionsPerPrincipal',
        options.limits?.sessionsPerPrincipal,
        DEFAULT_LIMITS.sessionsPerPrincipal,
      ),
      streamsPerPrincipal: positiveInteger(
        mount,
        'limits.streamsPerPrincipal',
        options.limits?.streamsPerPrincipal,
        DEFAULT_LIMITS.streamsPerPrincipal,
      ),
      listenStreamsPerPrincipal: positiveInteger(
        mount,
        'limits.listenStreamsPerPrincipal',
        options.limits?.listenStreamsPerPrincipal,
        DEFAULT_LIMITS.listenStreamsPerPrincipal,
      ),
      listenResourceSubscriptions: positiveInteger(
        mount,
        'limits.listenResourceSubscriptions',
        options.limits?.listenResourceSubscriptions,
        DEFAULT_LIMITS.listenResourceSubscriptions,
      ),
      listenTaskIds: positiveInteger(
        mount,
        'limits.listenTaskIds',
        options.limits?.listenTaskIds,
        DEFAULT_LIMITS.listenTaskIds,
      ),
      subscriptionsPerSession: positiveInteger(
        mount,
        'limits.subscriptionsPerSession',
        options.limits?.subscriptionsPerSession,
        DEFAULT_LIMITS.subscriptionsPerSession,
      ),
      tasksPerPrincipal: positiveInteger(
        mount,
        'limits.tasksPerPrincipal',
        options.limits?.tasksPerPrincipal,
        DEFAULT_LIMITS.tasksPerPrincipal,
      ),
    },
  };
}
