import type { Provider } from '@nestjs/common';
import { getSharedConfigToken } from '@nestjs/bull';
import type { QueueOptions } from 'bull';
import { MCP_MODULE_OPTIONS } from '../mcp.constants';
import { resolveClientOptions } from './config/client-options.resolver';
import { McpClientHandlerExplorer } from './handlers/client-handler.explorer';
import { McpServerRequestDispatcher } from './handlers/server-request.dispatcher';
import type { McpClientOptions } from './interfaces/mcp-client-options.interface';
import { MCP_CLIENT_OPTIONS } from './mcp-client.constants';
import { McpClientService } from './mcp-client.service';
import { McpCallProcessor } from './mcp-call.processor';
import { McpEnvelopeFactory } from './stateless/envelope.factory';
import { McpStatelessCallRunner } from './stateless/stateless-call.runner';
import { McpRevisionNegotiator } from './stateless/revision.negotiator';
import { McpOutboundExchanger } from './outbound-exchange';
import { McpOutboundEventRecorder } from './outbound-event.recorder';
import { McpCallQueueHost } from './queue/mcp-call-queue.host';
import { McpToolListCache } from './tool-list.cache';
import { McpTransportRegistry } from './transports/transport.registry';

/**
 * The client's providers in a mount: options (from the mount's options, sync or async, with the
 * host's `BullModule.forRoot` configuration as an optional fallback for Redis), the queue, the
 * processor, transports, handlers and `McpClientService`. The module also needs the client's
 * stores (`createMcpClientStoreProviders`) and, unless every one is swapped, the TypeORM feature
 * of `MCP_ENTITIES`.
 */
export function createMcpClientProviders(): Provider[] {
  return [
    {
      provide: MCP_CLIENT_OPTIONS,
      useFactory: (options: { client?: McpClientOptions }, shared?: QueueOptions) => resolveClientOptions(options.client, shared ?? undefined),
      inject: [MCP_MODULE_OPTIONS, { token: getSharedConfigToken(), optional: true }],
    },
    McpClientHandlerExplorer,
    McpServerRequestDispatcher,
    McpTransportRegistry,
    McpOutboundEventRecorder,
    McpOutboundExchanger,
    McpEnvelopeFactory,
    McpToolListCache,
    McpRevisionNegotiator,
    McpStatelessCallRunner,
    McpCallProcessor,
    McpCallQueueHost,
    McpClientService,
  ];
}
