import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { McpUnknownServerError } from '../../errors/mcp-client-call.errors';
import type { McpResolvedClientOptions } from '../config/client-options-resolver';
import { McpServerRequestDispatcher } from '../handlers/server-request-dispatcher';
import type { McpResolvedServerConfig } from '../interfaces/mcp-server-config.interface';
import { MCP_CLIENT_OPTIONS, MCP_TRANSPORT_FACTORIES } from '../mcp-client.constants';
import { storableEndpointKey } from '../stateless/endpoint-key';
import type { McpTransportFactory } from './mcp-transport-factory.interface';
import type { McpTransport } from './mcp-transport.interface';

/**
 * One transport per configured server per process, built on first use by the factory of its
 * `transport` (a stdio pool belongs to the worker that runs the calls). Closes them all when the
 * app shuts down.
 */
@Injectable()
export class McpTransportRegistry implements OnApplicationShutdown {
  private readonly logger = new Logger(McpTransportRegistry.name);
  private readonly transports = new Map<string, McpTransport>();
  /** Endpoint keys by server: the configuration is fixed at boot, so each is computed once. */
  private readonly endpointKeys = new Map<string, string | null>();

  constructor(
    @Inject(MCP_CLIENT_OPTIONS) private readonly options: McpResolvedClientOptions,
    @Inject(MCP_TRANSPORT_FACTORIES) private readonly factories: ReadonlyMap<string, McpTransportFactory<object>>,
    private readonly moduleRef: ModuleRef,
    private readonly dispatcher: McpServerRequestDispatcher,
  ) {}

  /** The configured server names. */
  names(): string[] {
    return Object.keys(this.options.servers);
  }

  /** The configuration of a server. @throws McpUnknownServerError */
  config(server: string): McpResolvedServerConfig {
    const config = Object.prototype.hasOwnProperty.call(this.options.servers, server)
      ? this.options.servers[server]
      : undefined;
    if (!config) throw new McpUnknownServerError(server, this.names());
    return config;
  }

  /** The transport of a server, created on first use. @throws McpUnknownServerError */
  get(server: string): McpTransport {
    let transport = this.transports.get(server);
    if (!transport) {
      const config = this.config(server);
      transport = this.factory(server).create(config, {
        server,
        clientCapabilities: this.dispatcher.capabilities(false, config.announce),
        resolve: (token) => this.moduleRef.get(token, { strict: false }),
      });
      this.transports.set(server, transport);
    }
    return transport;
  }

  /**
   * The endpoint a server's revision verdict belongs to, fit for storage; null when the server
   * needs no negotiation (an in-process toolset).
   */
  endpointKey(server: string): string | null {
    const known = this.endpointKeys.get(server);
    if (known !== undefined) return known;
    const key = this.computeEndpointKey(server);
    this.endpointKeys.set(server, key);
    return key;
  }

  private computeEndpointKey(server: string): string | null {
    const config = this.config(server);
    const factory = this.factory(server);
    const key = factory.endpointKey
      ? factory.endpointKey(config)
      : `${factory.transport} ${JSON.stringify({ server, config })}`;
    return key === null ? null : storableEndpointKey(factory.transport, key);
  }

  /** Whether stateless `tools/call` requests to a server carry `Mcp-Param-*` headers. */
  sendsRoutingHeaders(server: string): boolean {
    return this.factory(server).routingHeaders === true;
  }

  /** The transports built so far, by server name (for health checks). */
  opened(): ReadonlyMap<string, McpTransport> {
    return this.transports;
  }

  /** Releases every transport (processes, sockets, timers). */
  async onApplicationShutdown(): Promise<void> {
    const open = [...this.transports.entries()];
    this.transports.clear();
    await Promise.all(
      open.map(
        ([name, transport]) =>
          transport
            .close?.()
            .catch((error: unknown) =>
              this.logger.warn(`Closing the transport of "${name}" failed: ${(error as Error).message}`),
            ) ?? Promise.resolve(),
      ),
    );
  }

  private factory(server: string): McpTransportFactory<object> {
    // Server entries were resolved against these factories at boot, so the lookup cannot miss.
    return this.factories.get(this.config(server).transport) as McpTransportFactory<object>;
  }
}
