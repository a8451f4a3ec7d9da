import type { Provider } from '@nestjs/common';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../config/mcp.options';
import { McpLocalPubSub } from './local-pubsub';
import type { McpPubSub } from './mcp-pubsub.interface';
import { McpRedisPubSub } from './redis-pubsub';
import { McpLocalEventLog } from './local-event-log';
import type { McpEventLog } from './mcp-event-log.interface';
import { McpRedisEventLog } from './redis-event-log';
import { isRedisCluster } from '../../redis-connection';

export type { McpPubSub } from './mcp-pubsub.interface';

/**
 * The prefix of a mount's channel and key names on its pub/sub: `<advanced.pubsub.channelPrefix>:<mount>`
 * (the channels are `McpMountBus`'s, the keys the GET-stream claims and the event log's).
 */
export function mountBusPrefix(options: Pick<McpResolvedOptions, 'mount' | 'pubsub'>): string {
  return `${options.pubsub?.channelPrefix ?? 'mcp'}:${options.mount}`;
}

/** Injection token of a mount's pub/sub (Redis when the mount's `redis` is set, process-local otherwise). */
export const MCP_PUBSUB = 'MCP_PUBSUB';

/** Creates the pub/sub a mount's session bus runs on. */
function createMcpPubSub(options: Pick<McpResolvedOptions, 'redis' | 'pubsub'>): McpPubSub {
  const redis = options.redis;
  return redis ? new McpRedisPubSub(redis, options.pubsub.timeoutMs) : new McpLocalPubSub();
}

/** The provider of `MCP_PUBSUB`. */
export const mcpPubSubProvider: Provider = {
  provide: MCP_PUBSUB,
  useFactory: createMcpPubSub,
  inject: [MCP_MODULE_OPTIONS],
};

/** Injection token of a mount's stream event log (Redis streams with pub/sub on Redis, process memory otherwise). */
export const MCP_EVENT_LOG = 'MCP_EVENT_LOG';

/** Creates the event log that makes a mount's SSE streams resumable. */
function createMcpEventLog(
  options: Pick<McpResolvedOptions, 'mount' | 'pubsub' | 'streams' | 'redis'>,
  pubsub: McpPubSub,
): McpEventLog {
  const bounds = { maxEvents: options.streams.resumeEvents, ttlMs: options.streams.resumeTtlMs };
  if (pubsub instanceof McpRedisPubSub)
    return new McpRedisEventLog(pubsub.commands, mountBusPrefix(options), bounds, isRedisCluster(options.redis));
  return new McpLocalEventLog(bounds);
}

/** The provider of `MCP_EVENT_LOG`. */
export const mcpEventLogProvider: Provider = {
  provide: MCP_EVENT_LOG,
  useFactory: createMcpEventLog,
  inject: [MCP_MODULE_OPTIONS, MCP_PUBSUB],
};
