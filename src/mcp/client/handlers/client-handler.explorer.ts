import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpClientHandlerKind, McpClientRequestHandler } from '../interfaces/mcp-client-handlers.interface';
import { MCP_CLIENT_HANDLER_METADATA, MCP_CLIENT_OPTIONS } from '../mcp-client.constants';
import type { McpResolvedClientOptions } from '../config/client-options-resolver';

/**
 * Collects the handlers of server->client requests: those given in `client.handlers`, then the
 * `@McpSamplingHandler()` & co. methods of the app's providers. Two handlers of one kind are a
 * boot error naming both.
 */
@Injectable()
export class McpClientHandlerExplorer implements OnModuleInit {
  private readonly logger = new Logger(McpClientHandlerExplorer.name);
  private readonly handlers = new Map<McpClientHandlerKind, { handler: McpClientRequestHandler; owner: string }>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    @Inject(MCP_CLIENT_OPTIONS) private readonly options: McpResolvedClientOptions,
  ) {}

  /** Discovers the handlers. */
  onModuleInit(): void {
    for (const [kind, handler] of Object.entries(this.options.handlers)) {
      // A listener of notifications answers no request and declares no capability.
      if (handler && kind !== 'elicitationComplete') this.add(kind as McpClientHandlerKind, handler as McpClientRequestHandler, `client.handlers.${kind}`);
    }
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !Object.getPrototypeOf(instance)) continue;
      for (const name of this.scanner.getAllMethodNames(Object.getPrototypeOf(instance))) {
        const method = instance[name];
        if (typeof method !== 'function') continue;
        const kind = this.reflector.get<McpClientHandlerKind | undefined>(MCP_CLIENT_HANDLER_METADATA, method);
        if (!kind) continue;
        const owner = `${instance.constructor.name}#${name}`;
        if (!wrapper.isDependencyTreeStatic()) {
          this.logger.warn(`${owner}: request-scoped providers cannot answer server requests; the handler is skipped.`);
          continue;
        }
        this.add(kind, (params, context) => method.call(instance, params, context), owner);
      }
    }
  }

  /** The handler of a kind, if any. */
  get(kind: McpClientHandlerKind): McpClientRequestHandler | undefined {
    return this.handlers.get(kind)?.handler;
  }

  /** The kinds that have a handler (announced as client capabilities). */
  kinds(): McpClientHandlerKind[] {
    return [...this.handlers.keys()];
  }

  private add(kind: McpClientHandlerKind, handler: McpClientRequestHandler, owner: string): void {
    const existing = this.handlers.get(kind);
    if (existing) {
      throw new McpConfigurationError(
        `Two MCP ${kind} handlers: ${existing.owner} and ${owner}. Keep one (a client answers each server request kind with one handler).`,
      );
    }
    this.handlers.set(kind, { handler, owner });
  }
}
