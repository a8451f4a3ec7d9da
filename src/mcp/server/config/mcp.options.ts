import type { McpModuleExtras, McpModuleOptions } from '../interfaces/mcp-module-options.interface';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import { invalidAuthMessage, invalidOptionMessage, missingAuthMessage } from '../../mcp.messages';
import { resolveOptions, type OptionsContext, type ResolvedOptions } from '../../options/options-model';
import { MCP_MODULE_OPTIONS_MODEL } from './mcp-module-model.options';
import { resolveOAuthOptions, type McpResolvedOAuthOptions } from './mcp-oauth.options';
import type { McpResolvedTasksOptions } from './mcp-tasks.options';
import { checkedRateLimit, type McpResolvedRateLimit } from './mcp-rate-limit.options';
import { checkRedisConnection } from '../../redis-connection';
import { resolveMountRetention, type McpResolvedRetention } from '../../persistence/retention/mcp-retention.options';

type Model = typeof MCP_MODULE_OPTIONS_MODEL;

/** The expert settings after defaults; the resolved options carry them at the top level. */
type AdvancedResolved = ResolvedOptions<McpModuleOptions.Advanced, Model['advanced']['options']>;

/**
 * A mount's options after defaults were applied and the configuration was checked. The members of
 * `advanced` sit at the top level, where the mount's code reads them.
 */
export type McpResolvedOptions = Omit<
  ResolvedOptions<McpModuleOptions, Model>,
  'auth' | 'oauth' | 'retention' | 'tasks' | 'advanced' | 'rateLimit'
> &
  AdvancedResolved & {
    /** The authorizer. */
    auth: NonNullable<McpModuleOptions['auth']>;
    /** The name of the mount. */
    mount: string;
    /** The HTTP path of the endpoint. */
    path: string;
    /** The OAuth resource-server settings, when the mount has the `oauth` option. */
    oauth?: McpResolvedOAuthOptions;
    /** The `tasks` option, defaults applied. */
    tasks: McpResolvedTasksOptions;
    /** The `retention` option checked; null: nothing is pruned. */
    retention: McpResolvedRetention | null;
    /** The mount's budget of calls per principal (`rateLimit`); null: none. */
    rateLimit: McpResolvedRateLimit | null;
  };

/** The options as the model resolves them, before the cross-field completions below. */
type ModelResolved = ResolvedOptions<McpModuleOptions, Model>;

function context(mount: string, path: string, authorizationServer?: string): OptionsContext {
  return {
    where: `McpModule (mount "${mount}")`,
    invalid: (option, expected) => invalidOptionMessage(mount, option, expected),
    nonNegativeInteger: 'an integer of 0 or more',
    validators: {
      auth: ({ value }) => {
        if (value === undefined || value === null) throw new McpConfigurationError(missingAuthMessage(mount));
        if (typeof value !== 'function') throw new McpConfigurationError(invalidAuthMessage(mount));
        return value;
      },
      oauth: ({ value }) =>
        resolveOAuthOptions(mount, path, value as McpModuleOptions.OAuth | undefined, authorizationServer),
      retention: ({ value }) => resolveMountRetention(mount, value),
      rateLimit: ({ value }) => checkedRateLimit(value, `McpModule (mount "${mount}") option "rateLimit"`, false),
      redis: checkRedisConnection,
    },
  };
}

/** Applies defaults and fails closed on a configuration that cannot work (no auth above all). */
export function resolveMcpOptions(
  options: McpModuleOptions | undefined,
  extras: Pick<McpModuleExtras, 'mount' | 'path'>,
  authorizationServer?: string,
): McpResolvedOptions {
  const { mount, path } = extras;
  if (options === undefined || options === null) throw new McpConfigurationError(missingAuthMessage(mount));
  const resolved = resolveOptions<ModelResolved>(
    MCP_MODULE_OPTIONS_MODEL,
    options,
    context(mount, path, authorizationServer),
  );
  const { tasks, advanced, ...rest } = resolved;
  return {
    ...rest,
    ...advanced,
    auth: resolved.auth as NonNullable<McpModuleOptions['auth']>,
    mount,
    path,
    oauth: resolved.oauth as unknown as McpResolvedOAuthOptions | undefined,
    retention: resolved.retention as McpResolvedRetention | null,
    rateLimit: resolved.rateLimit as McpResolvedRateLimit | null,
    tasks: {
      ...tasks,
      redis: resolved.redis ?? null,
      defaultTtlMs: Math.min(tasks.defaultTtlMs, tasks.maxTtlMs),
      inputTimeoutMs: tasks.inputTimeoutMs ?? advanced.streams.clientRequestTimeoutMs,
      queueName: tasks.queueName ?? `mcp-tasks-${mount}`,
    },
  };
}
