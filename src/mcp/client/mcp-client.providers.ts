import type { Provider, Type } from '@nestjs/common';
import type { QueueOptions } from 'bull';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { duplicateTransportMessage } from '../mcp.messages';
import { resolveClientOptions, type McpResolvedClientOptions } from './config/client-options-resolver';
import { DEFAULT_SESSION_IDLE_TTL_MS } from '../mcp.constants';
import type { McpStoreSettings } from '../persistence/interfaces/mcp-store-settings.interface';
import { MCP_STORE_SETTINGS } from '../persistence/mcp-persistence.constants';
import { MCP_TOKEN_STORE_PROVIDER } from './auth/mcp-token-store.provider';
import { McpClientHandlerExplorer } from './handlers/client-handler.explorer';
import { McpServerRequestDispatcher } from './handlers/server-request-dispatcher';
import type { McpClientModuleExtras, McpClientOptions } from './interfaces/mcp-client-options.interface';
import { McpCallProcessor } from './mcp-call-processor';
import { MCP_CLIENT_RAW_OPTIONS } from './mcp-client.module-definition';
import { MCP_CLIENT_OPTIONS, MCP_CLIENT_RETENTION, MCP_TRANSPORT_FACTORIES } from './mcp-client.constants';
import { ModuleRef } from '@nestjs/core';
import { McpRetentionService } from '../persistence/retention/mcp-retention.service';
import { McpClientService } from './mcp-client.service';
import { McpOutboundEventRecorder } from './outbound-event-recorder';
import { McpOutboundExchanger } from './outbound-exchange';
import { McpCallQueueHost } from './queue/mcp-call-queue-host';
import { McpEnvelopeFactory } from './stateless/envelope.factory';
import { McpRevisionNegotiator } from './stateless/revision-negotiator';
import { McpStatelessCallRunner } from './stateless/stateless-call-runner';
import { McpToolListCache } from './tool-list-cache';
import { BUILT_IN_TRANSPORT_FACTORIES } from './transports/built-in-transports.constants';
import type { McpTransportFactory } from './transports/mcp-transport-factory.interface';
import { McpTransportRegistry } from './transports/transport-registry';
import { transportFactoryEntries } from './transports/mcp-client-transports';

/**
 * The token under which `BullModule.forRoot` of `@nestjs/bull` provides its configuration. It is
 * read (optionally) by name, so that apps without Bull need not install `@nestjs/bull`.
 */
const BULL_SHARED_CONFIG_TOKEN = 'BULL_CONFIG(default)';

type AnyFactory = McpTransportFactory<object>;

function transportProviders(extras: McpClientModuleExtras): Provider[] {
  const registered = transportFactoryEntries(extras.transports);
  const classes = registered.filter((entry): entry is Type<AnyFactory> => typeof entry === 'function');
  return [
    ...classes,
    {
      provide: MCP_TRANSPORT_FACTORIES,
      useFactory: (...instances: AnyFactory[]) => {
        const factories = new Map(BUILT_IN_TRANSPORT_FACTORIES);
        let next = 0;
        for (const entry of registered) {
          const factory = typeof entry === 'function' ? instances[next++] : (entry as AnyFactory);
          if (factories.has(factory.transport))
            throw new McpConfigurationError(duplicateTransportMessage(factory.transport));
          factories.set(factory.transport, factory);
        }
        return factories as ReadonlyMap<string, AnyFactory>;
      },
      inject: classes,
    },
  ];
}

/**
 * The providers of `McpClientModule`: resolved options (with the host's `BullModule.forRoot`
 * configuration as an optional fallback for Redis), transport factories, the queue and its
 * processor, handlers and `McpClientService`. The module adds the client's stores
 * (`createMcpClientStoreProviders`).
 */
export function createMcpClientProviders(extras: McpClientModuleExtras): Provider[] {
  return [
    ...transportProviders(extras),
    {
      provide: MCP_CLIENT_OPTIONS,
      useFactory: (options: McpClientOptions, factories: ReadonlyMap<string, AnyFactory>, shared?: QueueOptions) =>
        resolveClientOptions(options, shared ?? undefined, factories),
      inject: [MCP_CLIENT_RAW_OPTIONS, MCP_TRANSPORT_FACTORIES, { token: BULL_SHARED_CONFIG_TOKEN, optional: true }],
    },
    {
      // The client's stores serve no mount: only the audit commit mode (and the default database bound) apply.
      provide: MCP_STORE_SETTINGS,
      useFactory: (options: McpResolvedClientOptions): McpStoreSettings => ({
        mount: '',
        idleTtlMs: DEFAULT_SESSION_IDLE_TTL_MS,
        auditCommit: options.audit.commit,
      }),
      inject: [MCP_CLIENT_OPTIONS],
    },
    {
      provide: MCP_CLIENT_RETENTION,
      useFactory: (options: McpResolvedClientOptions, moduleRef: ModuleRef) =>
        new McpRetentionService(
          {
            scope: { kind: 'client' },
            retention: options.retention,
            queue: options.queue.bull ? { name: `${options.queue.name}-retention`, options: options.queue.bull } : null,
          },
          moduleRef,
        ),
      inject: [MCP_CLIENT_OPTIONS, ModuleRef],
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
    MCP_TOKEN_STORE_PROVIDER,
    McpClientService,
  ];
}
