import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type {
  McpClientHandlerKind,
  McpClientRequestHandler,
  McpSamplingHandlerConfig,
  McpSamplingHandlerOptions,
} from '../interfaces/mcp-client-handlers.interface';
import {
  MCP_CLIENT_HANDLER_METADATA,
  MCP_CLIENT_OPTIONS,
  MCP_SAMPLING_HANDLER_OPTIONS_METADATA,
} from '../mcp-client.constants';
import type { McpResolvedClientOptions } from '../config/client-options-resolver';

/** The handler and options of a `{ handler, tools }` sampling entry, checked at boot. */
function samplingConfig(
  config: McpSamplingHandlerConfig,
  owner: string,
): [McpClientRequestHandler, McpSamplingHandlerOptions] {
  const { handler, tools, ...unknown } = config;
  const extra = Object.keys(unknown);
  if (extra.length)
    throw new McpConfigurationError(`${owner} has unknown keys ${extra.join(', ')}: it takes { handler, tools }.`);
  if (typeof handler !== 'function')
    throw new McpConfigurationError(`${owner}.handler must be a function (or give the function itself as ${owner}).`);
  if (tools !== undefined && typeof tools !== 'boolean')
    throw new McpConfigurationError(`${owner}.tools must be true or false.`);
  return [handler, tools === undefined ? {} : { tools }];
}

/**
 * Collects the handlers of server->client requests: those given in `client.handlers`, then the
 * `@McpSamplingHandler()` & co. methods of the app's providers. Two handlers of one kind are a
 * boot error naming both.
 */
@Injectable()
export class McpClientHandlerExplorer implements OnModuleInit {
  private readonly logger = new Logger(McpClientHandlerExplorer.name);
  private readonly handlers = new Map<McpClientHandlerKind, { handler: McpClientRequestHandler; owner: string }>();
  private samplingOptions: McpSamplingHandlerOptions = {};

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
      if (!handler || kind === 'elicitationComplete') continue;
      const owner = `client.handlers.${kind}`;
      if (kind === 'sampling' && typeof handler === 'object') {
        const [answer, options] = samplingConfig(handler as McpSamplingHandlerConfig, owner);
        this.add('sampling', answer, options, owner);
      } else this.add(kind as McpClientHandlerKind, handler as McpClientRequestHandler, undefined, owner);
    }
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !Object.getPrototypeOf(instance)) continue;
      for (const name of this.scanner.getAllMethodNames(Object.getPrototypeOf(instance) as object)) {
        const method = instance[name];
        if (typeof method !== 'function') continue;
        const kind = this.reflector.get<McpClientHandlerKind | undefined>(MCP_CLIENT_HANDLER_METADATA, method);
        if (!kind) continue;
        const owner = `${instance.constructor.name}#${name}`;
        if (!wrapper.isDependencyTreeStatic()) {
          this.logger.warn(`${owner}: request-scoped providers cannot answer server requests; the handler is skipped.`);
          continue;
        }
        const options =
          kind === 'sampling'
            ? this.reflector.get<McpSamplingHandlerOptions | undefined>(MCP_SAMPLING_HANDLER_OPTIONS_METADATA, method)
            : undefined;
        this.add(kind, (params, context) => method.call(instance, params, context), options, owner);
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

  /** Whether the sampling handler accepts tool use (`sampling.tools`). */
  samplingTools(): boolean {
    return this.handlers.has('sampling') && this.samplingOptions.tools === true;
  }

  private add(
    kind: McpClientHandlerKind,
    handler: McpClientRequestHandler,
    options: McpSamplingHandlerOptions | undefined,
    owner: string,
  ): void {
    const existing = this.handlers.get(kind);
    if (existing) {
      throw new McpConfigurationError(
        `Two MCP ${kind} handlers: ${existing.owner} and ${owner}. Keep one (a client answers each server request kind with one handler).`,
      );
    }
    this.handlers.set(kind, { handler, owner });
    if (kind === 'sampling') this.samplingOptions = { ...options };
  }
}
