import type { McpModuleOptions } from '../interfaces/mcp-module-options.interface';

/** The cache settings after defaults were applied; `false` when the cache is off. */
export type McpResolvedSessionCache = Required<McpModuleOptions.SessionCache> | false;

/** Defaults of `McpModuleOptions.SessionCache`. */
export const DEFAULT_SESSION_CACHE: Required<McpModuleOptions.SessionCache> = {
  ttlMs: 1000,
  maxEntries: 10_000,
};
