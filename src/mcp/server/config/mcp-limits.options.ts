import type { McpModuleOptions } from '../interfaces/mcp-module-options.interface';

/** Limits after defaults were applied. */
export type McpResolvedLimits = Required<McpModuleOptions.Limits>;

/** Defaults of `McpModuleOptions.Limits`. */
export const DEFAULT_LIMITS: McpResolvedLimits = {
  sessionsPerPrincipal: 100,
  streamsPerPrincipal: 100,
  listenStreamsPerPrincipal: 100,
  listenResourceSubscriptions: 1000,
  listenTaskIds: 1000,
  subscriptionsPerSession: 1000,
  tasksPerPrincipal: 100,
};

/** JSON-RPC code of an exceeded cap (the implementation-defined server error range). */
export const LIMIT_EXCEEDED_CODE = -32000;
