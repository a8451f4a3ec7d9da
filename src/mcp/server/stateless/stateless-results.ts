import type { McpCacheHint } from '../interfaces/mcp-module-options.interface';
import type { McpResolvedOptions } from '../config/mcp.options';
import { McpMethod } from '../../protocol/mcp-methods';
import { methodFacts } from '../../protocol/method-catalog';
import { StatelessMetaKey, ResultType } from '../../protocol/stateless';
import { TASKS_EXTENSION } from '../../protocol/tasks';
import type { Toolset } from '../dispatch/toolset';
import { SERVED_PROTOCOL_VERSIONS } from './stateless-envelope';

/** Hints of lists and `server/discover` when the mount sets none: shared, fresh for a minute. */
const DEFAULT_LIST_CACHE: Required<McpCacheHint> = { ttlMs: 60_000, scope: 'public' };

/** Hints of `resources/read` when the mount sets none: a read may be per user, so private and stale. */
const DEFAULT_READ_CACHE: Required<McpCacheHint> = { ttlMs: 0, scope: 'private' };

function cacheHintFor(method: string, options: McpResolvedOptions): Required<McpCacheHint> {
  if (method === McpMethod.ResourcesRead) {
    return {
      ttlMs: options.cache?.read?.ttlMs ?? DEFAULT_READ_CACHE.ttlMs,
      scope: options.cache?.read?.scope ?? DEFAULT_READ_CACHE.scope,
    };
  }
  return {
    ttlMs: options.cache?.ttlMs ?? DEFAULT_LIST_CACHE.ttlMs,
    scope: options.cache?.scope ?? DEFAULT_LIST_CACHE.scope,
  };
}

/** `serverInfo` as the stateless revision carries it in every result's `_meta`. */
function serverInfoOf(toolset: Toolset): Record<string, unknown> {
  const { name, version, title } = toolset.getIdentity();
  return title ? { name, version, title } : { name, version };
}

/** The `server/discover` result (before decoration): revisions, capabilities, instructions. */
export function discoverResult(toolset: Toolset): Record<string, unknown> {
  const { instructions } = toolset.getIdentity();
  // The tasks of 2025-11-25 are a session capability; here they are the tasks extension.
  const { tasks, ...capabilities } = toolset.getCapabilities();
  if (tasks)
    capabilities.extensions = {
      ...(capabilities.extensions as Record<string, unknown> | undefined),
      [TASKS_EXTENSION]: {},
    };
  return {
    supportedVersions: [...SERVED_PROTOCOL_VERSIONS],
    capabilities,
    ...(instructions ? { instructions } : {}),
  };
}

/**
 * Completes a stateless result: `resultType` (`complete` unless the handler set one), the
 * server's identity in `_meta`, and caching hints on the cacheable methods' complete results.
 * A retried multi round-trip request is never cacheable, so its result gets `ttlMs: 0` and
 * `private`. Hints a handler set itself are kept.
 */
export function decorateResult(
  method: string,
  result: Record<string, unknown>,
  toolset: Toolset,
  options: McpResolvedOptions,
  retried: boolean,
): Record<string, unknown> {
  const resultType = typeof result.resultType === 'string' ? result.resultType : ResultType.Complete;
  const meta = result._meta && typeof result._meta === 'object' ? (result._meta as Record<string, unknown>) : {};
  const decorated: Record<string, unknown> = {
    ...result,
    resultType,
    _meta: { ...meta, [StatelessMetaKey.ServerInfo]: meta[StatelessMetaKey.ServerInfo] ?? serverInfoOf(toolset) },
  };
  if (resultType !== ResultType.Complete || !methodFacts(method)?.cacheable) return decorated;
  const hint = retried ? { ttlMs: 0, scope: 'private' as const } : cacheHintFor(method, options);
  if (typeof decorated.ttlMs !== 'number') decorated.ttlMs = hint.ttlMs;
  if (decorated.cacheScope !== 'public' && decorated.cacheScope !== 'private') decorated.cacheScope = hint.scope;
  return decorated;
}
