import type { McpModuleOptions } from '../interfaces/mcp-module-options.interface';

/** Stream settings after defaults were applied. */
export type McpResolvedStreamOptions = Required<McpModuleOptions.Streams>;

/** Defaults of `McpModuleOptions.Streams`. */
export const DEFAULT_STREAM_OPTIONS: McpResolvedStreamOptions = {
  clientRequestTimeoutMs: 300_000,
  keepAliveMs: 15_000,
  retryMs: 1_000,
  maxBufferedBytes: 4_194_304,
  resumeEvents: 500,
  resumeTtlMs: 600_000,
  resumeFollowers: 1_000,
};
