import { Global, Module } from '@nestjs/common';
import { McpDrainService } from './mcp-drain.service';

/**
 * Holds the app's one `McpDrainService`, shared by every mount and the health module. Global, so
 * that Nest runs its shutdown hook among the first: the drain starts before any mount or the
 * client closes what the calls in flight still use.
 */
@Global()
@Module({ providers: [McpDrainService], exports: [McpDrainService] })
export class McpDrainModule {}
