import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { McpUnknownServerError } from '../../errors/mcp-client-call.errors';
import type { McpMessageHandler } from '../../interfaces/mcp-delivery.interface';
import { getMcpToolsetToken } from '../../mcp.constants';
import type { McpResolvedClientOptions } from '../config/client-options.resolver';
import { McpServerRequestDispatcher } from '../handlers/server-request.dispatcher';
import type { McpResolvedServerConfig } from '../interfaces/mcp-server-config.interface';
import { MCP_CLIENT_OPTIONS } from '../mcp-client.constants';
import type { McpTransport } from './mcp-transport.interface';
import { createRemoteTransport } from './remote-transport.factory';
import { ToolsetTransport } from './toolset/toolset.transport';

/**
 * One transport per configured server per process, created on first use: a stdio pool belongs
 * to the worker that runs the calls. Closes them all when the app shuts down.
 */
@Injectable()
export class McpTransportRegistry implements OnApplicationShutdown {
  private readonly logger = new Logger(McpTransportRegistry.name);
  private readonly transports = new Map<string, McpTransport>();

  constructor(
    @Inject(MCP_CLIENT_OPTIONS) private readonly options: McpResolvedClientOptions,
    private readonly moduleRef: ModuleRef,
    private readonly dispatcher: McpServerRequestDispatcher,
  ) {}

  /** The configured server names. */
  names(): string[] {
    return Object.keys(this.options.servers);
  }

  /** The configuration of a server. @throws McpUnknownServerError */
  config(server: string): McpResolvedServerConfig {
    const config = Object.prototype.hasOwnProperty.call(this.options.servers, server) ? this.options.servers[server] : undefined;
    if (!config) throw new McpUnknownServerError(server, this.names());
    return config;
  }

  /** The transport of a server, created on first use. @throws McpUnknownServerError */
  get(server: string): McpTransport {
    let transport = this.transports.get(server);
    if (!transport) {
      transport = this.create(this.config(server));
      this.transports.set(server, transport);
    }
    return transport;
  }

  /** Releases every transport (processes, sockets, timers). */
  async onApplicationShutdown(): Promise<void> {
    const open = [...this.transports.entries()];
    this.transports.clear();
    await Promise.all(
      open.map(([name, transport]) =>
        transport.close?.().catch((error: unknown) => this.logger.warn(`Closing the transport of "${name}" failed: ${(error as Error).message}`)),
      ),
    );
  }

  private create(config: McpResolvedServerConfig): McpTransport {
    if (config.transport !== 'toolset') return createRemoteTransport(config, this.dispatcher.capabilities());
    const principal = typeof config.principal === 'string' ? { key: config.principal, label: config.principal } : config.principal;
    const token = getMcpToolsetToken(config.mount);
    return new ToolsetTransport({
      principal: { key: principal.key, label: principal.label ?? principal.key, raw: config.principal },
      resolveHandler: () => this.moduleRef.get<McpMessageHandler>(token, { strict: false }),
    });
  }
}
