import type { Provider } from '@nestjs/common';
import { MCP_CLIENT_TOKEN_STORE } from '../mcp-client.constants';
import type { BullCallQueue } from '../queue/bull-call-queue';
import { McpCallQueueHost } from '../queue/mcp-call-queue-host';
import { MemoryTokenStore } from './memory-token.store';
import { RedisTokenStore } from './redis-token.store';

/**
 * The client's token store: on the Bull queue's Redis connection (keys `<prefix>:mcp-oauth:*`,
 * beside the queue's own, under the same hash tag on a Cluster) when the queue is Bull, so every worker, of any queue on that Redis
 * and prefix, shares a token; in memory otherwise.
 */
export const MCP_TOKEN_STORE_PROVIDER: Provider = {
  provide: MCP_CLIENT_TOKEN_STORE,
  useFactory: (host: McpCallQueueHost) => {
    if (host.queue.mode !== 'bull') return new MemoryTokenStore();
    const queue = host.queue as BullCallQueue;
    return new RedisTokenStore(queue.bull.client, `${queue.keyPrefix}:mcp-oauth:`);
  },
  inject: [McpCallQueueHost],
};
