import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, ExternalContextCreator, MetadataScanner, ModuleRef } from '@nestjs/core';
import type { McpToolMetadata } from '../interfaces/mcp-tool-options.interface';
import { MCP_MODULE_OPTIONS } from '../mcp.constants';
import { requestScopedToolMessage } from '../mcp.messages';
import type { McpResolvedOptions } from './config/mcp.options';
import { buildToolEntry } from './catalog/handler-catalog.factory';
import { createMethodInvoker, providerMethods, type ProviderMethod } from './features/provider-methods';
import { McpMetadataAccessor } from './decorators/mcp-metadata.accessor';
import { handlerPipelineFor } from './pipeline/handler-pipeline';
import { builtInGuards } from './pipeline/public-handlers';
import { Toolset } from './dispatch/toolset';
import type { RegisteredTool } from './tools/registered-tool';

/**
 * Finds the `@McpTool` methods of the app's providers when the app initializes and registers the
 * ones this mount serves in its `Toolset`, with schemas and validators compiled once (by the
 * handler-catalog builder `McpRegistry.addTool` uses too).
 */
@Injectable()
export class ToolsetExplorer implements OnModuleInit {
  private readonly logger = new Logger(ToolsetExplorer.name);

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: McpMetadataAccessor,
    private readonly moduleRef: ModuleRef,
    private readonly toolset: Toolset,
    private readonly contextCreator: ExternalContextCreator,
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
  ) {}

  /** Discovers and registers the tools. */
  onModuleInit(): void {
    for (const method of providerMethods(this.discovery, this.scanner, this.options.providers)) {
      const metadata = this.accessor.getToolMetadata(method.instance[method.methodName]);
      if (metadata) this.toolset.register(this.buildTool(method, metadata));
    }
  }

  private buildTool(method: ProviderMethod, metadata: McpToolMetadata): RegisteredTool {
    const { owner, methodName } = method;
    const built = buildToolEntry(metadata, owner);
    return {
      ...built,
      pipeline: handlerPipelineFor(
        this.moduleRef,
        this.contextCreator,
        method,
        builtInGuards(this.options.anonymous, built.public),
      ),
      invoke: createMethodInvoker(this.moduleRef, method, methodName, this.logger, requestScopedToolMessage(owner)),
    };
  }
}
