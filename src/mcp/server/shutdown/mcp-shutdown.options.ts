import type { ResolvedOptions } from '../../options/options-model';
import type { MCP_MODULE_OPTIONS_MODEL } from '../config/mcp-module-model.options';
import type { McpModuleOptions } from '../interfaces/mcp-module-options.interface';

/** The `shutdown` option after defaults. */
export type McpResolvedShutdownOptions = ResolvedOptions<
  McpModuleOptions.Shutdown,
  (typeof MCP_MODULE_OPTIONS_MODEL)['advanced']['options']['shutdown']['options']
>;

/** Default of `shutdown.drainTimeoutMs`. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;

/** Default of `shutdown.quietPeriodMs`. */
export const DEFAULT_QUIET_PERIOD_MS = 500;
