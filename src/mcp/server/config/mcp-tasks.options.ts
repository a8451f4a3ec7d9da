import type { McpRedisConnection } from '../../redis-connection';
import type { ResolvedOptions } from '../../options/options-model';
import type { MCP_MODULE_OPTIONS_MODEL } from './mcp-module-model.options';
import type { McpModuleOptions } from '../interfaces/mcp-module-options.interface';

/** The `tasks` option after defaults: the Redis of the queue (null: tasks run in process), the queue name and the input bound completed from the mount. */
export type McpResolvedTasksOptions = Omit<
  ResolvedOptions<McpModuleOptions.Tasks, (typeof MCP_MODULE_OPTIONS_MODEL)['tasks']['options']>,
  'redis' | 'inputTimeoutMs' | 'queueName'
> & { redis: McpRedisConnection | null; inputTimeoutMs: number; queueName: string };
