import { Inject, Injectable, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import type { McpResolvedClientOptions } from '../config/client-options-resolver';
import { MCP_CLIENT_OPTIONS } from '../mcp-client.constants';
import { McpCallProcessor } from '../mcp-call-processor';
import { BullCallQueue } from './bull-call-queue';
import { InlineCallQueue } from './inline-call-queue';
import type { McpCallQueue } from './mcp-call-queue.interface';

/**
 * Owns the call queue of the app: a Bull queue when Redis is configured (created here, once,
 * because whether it exists may depend on async options), else the inline queue, which never
 * opens a Redis connection. Workers start after bootstrap; the queue closes on shutdown.
 */
@Injectable()
export class McpCallQueueHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  /** The queue in use. */
  readonly queue: McpCallQueue;

  constructor(@Inject(MCP_CLIENT_OPTIONS) options: McpResolvedClientOptions, processor: McpCallProcessor) {
    this.queue = options.queue.bull
      ? new BullCallQueue(options.queue, processor)
      : new InlineCallQueue(options.queue, processor);
  }

  /** Starts processing jobs when this process is a worker. */
  onApplicationBootstrap(): void {
    this.queue.start();
  }

  /** Stops processing and closes Redis connections. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.queue.close();
  }
}
