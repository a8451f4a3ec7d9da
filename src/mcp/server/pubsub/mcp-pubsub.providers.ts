import type { Provider } from '@nestjs/common';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../mcp.options';
import { McpLocalPubSub } from './local-pubsub';
import type { McpPubSub } from './mcp-pubsub.interface';
import { McpRedisPubSub } from './redis-pubsub';

export type { McpPubSub } from './mcp-pubsub.interface';

/** Injection token of a mount's pub/sub (Redis when `pubsub.redis` is set, process-local otherwise). */
export const MCP_PUBSUB = 'MCP_PUBSUB';

/** Creates the pub/sub a mount's session bus runs on. */
function createMcpPubSub(options: Pick<McpResolvedOptions, 'pubsub'>): McpPubSub {
  const redis = options.pubsub?.redis;
  return redis ? new McpRedisPubSub(redis, options.pubsub?.timeoutMs) : new McpLocalPubSub();
}

/** The provider of `MCP_PUBSUB`. */
export const mcpPubSubProvider: Provider = {
  provide: MCP_PUBSUB,
  useFactory: createMcpPubSub,
  inject: [MCP_MODULE_OPTIONS],
};
