import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, ExternalContextCreator, MetadataScanner, ModuleRef } from '@nestjs/core';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import type { McpCompleters } from '../interfaces/mcp-completion.interface';
import type { McpPromptMetadata } from '../interfaces/mcp-prompt-options.interface';
import type { McpResourceMetadata, McpResourceTemplateMetadata } from '../interfaces/mcp-resource-options.interface';
import { MCP_MODULE_OPTIONS } from '../mcp.constants';
import { missingCompleterMethodMessage, requestScopedFeatureMessage, unknownCompleterMessage } from '../mcp.messages';
import type { McpResolvedOptions } from './config/mcp.options';
import { CompletionFeature } from './features/completion.feature';
import { LoggingFeature } from './features/logging.feature';
import { buildPromptEntry, buildResourceEntry, buildTemplateEntry } from './catalog/handler-catalog.factory';
import { PromptsFeature } from './features/prompts.feature';
import { createMethodInvoker, providerMethods, type ProviderMethod } from './features/provider-methods';
import type {
  MethodInvoker,
  RegisteredPrompt,
  RegisteredResource,
  RegisteredResourceTemplate,
  ResolvedCompleter,
  ResolvedCompleters,
} from './features/registered-features';
import { ResourceSubscriptionsFeature } from './features/resource-subscriptions.feature';
import { resourceNotFound, ResourcesFeature } from './features/resources.feature';
import { handlerPipelineFor, type HandlerPipeline } from './pipeline/handler-pipeline';
import { builtInGuards, checkedPublic } from './pipeline/public-handlers';
import { guardedInvoker, type RefusalFactory } from './features/guarded-handlers';
import { McpRefusedError } from './pipeline/handler-refusal';
import { invalidParams } from './features/feature-handler';
import type { McpHandlerKind } from './pipeline/mcp-execution-context';
import { McpMethod } from '../protocol/mcp-methods';
import { JsonRpcErrorCode } from '../protocol/jsonrpc';
import { McpMetadataAccessor } from './decorators/mcp-metadata.accessor';

/** A refused prompt answers as an unknown one. */
const refusePrompt: RefusalFactory = (info, note) =>
  new McpRefusedError(JsonRpcErrorCode.InvalidParams, `Unknown prompt: ${info.name}`, note);

/** A refused resource answers as one that does not exist (the revision's code, the URI in `data`). */
const refuseResource: RefusalFactory = (info, note) => {
  const uri = (info.arguments as { uri: string }).uri;
  const notFound = resourceNotFound(uri, info.protocolVersion);
  return new McpRefusedError(notFound.code, notFound.message, note, notFound.data);
};

/**
 * Finds the `@McpResource`, `@McpResourceTemplate` and `@McpPrompt` methods of the app's
 * providers when the app initializes, registers them with the mount's features, and installs
 * the features (and their capabilities) that have something to serve. Logging is always served.
 */
@Injectable()
export class FeaturesExplorer implements OnModuleInit {
  private readonly logger = new Logger(FeaturesExplorer.name);

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: McpMetadataAccessor,
    private readonly moduleRef: ModuleRef,
    private readonly resources: ResourcesFeature,
    private readonly subscriptions: ResourceSubscriptionsFeature,
    private readonly prompts: PromptsFeature,
    private readonly completion: CompletionFeature,
    private readonly logging: LoggingFeature,
    private readonly contextCreator: ExternalContextCreator,
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
  ) {}

  /** Discovers, registers and installs. */
  onModuleInit(): void {
    let completers = 0;
    for (const method of providerMethods(this.discovery, this.scanner, this.options.providers)) {
      const handler = method.instance[method.methodName];
      const resource = this.accessor.getResourceMetadata(handler);
      if (resource) this.resources.addResource(this.buildResource(method, resource));
      const template = this.accessor.getResourceTemplateMetadata(handler);
      if (template) {
        const registered = this.buildTemplate(method, template);
        completers += registered.completers.size;
        this.resources.addTemplate(registered);
      }
      const prompt = this.accessor.getPromptMetadata(handler);
      if (prompt) {
        const registered = this.buildPrompt(method, prompt);
        completers += registered.completers.size;
        this.prompts.add(registered);
      }
    }
    this.logging.install();
    if (!this.resources.isEmpty) {
      this.resources.install();
      this.subscriptions.install();
    }
    if (!this.prompts.isEmpty) this.prompts.install();
    if (completers) this.completion.install();
  }

  private buildResource(method: ProviderMethod, metadata: McpResourceMetadata): RegisteredResource {
    const built = buildResourceEntry(metadata, method.owner);
    return {
      ...built,
      ...this.handler(
        method,
        '@McpResource',
        metadata.public,
        'resource',
        built.uri,
        McpMethod.ResourcesRead,
        refuseResource,
        'read',
      ),
    };
  }

  private buildTemplate(method: ProviderMethod, metadata: McpResourceTemplateMetadata): RegisteredResourceTemplate {
    const built = buildTemplateEntry(metadata, method.owner);
    return {
      ...built,
      completers: this.completers(method, metadata.complete, built.template.variables),
      ...this.handler(
        method,
        '@McpResourceTemplate',
        metadata.public,
        'resourceTemplate',
        metadata.uriTemplate,
        McpMethod.ResourcesRead,
        refuseResource,
        'read',
      ),
    };
  }

  private buildPrompt(method: ProviderMethod, metadata: McpPromptMetadata): RegisteredPrompt {
    const { entry, argumentNames } = buildPromptEntry(metadata, method.owner);
    const { name, validateArguments } = entry;
    return {
      ...entry,
      completers: this.completers(method, metadata.complete, argumentNames),
      ...this.handler(
        method,
        '@McpPrompt',
        metadata.public,
        'prompt',
        name,
        McpMethod.PromptsGet,
        refusePrompt,
        'get',
        async (args) => {
          const outcome = await validateArguments(args);
          if (!outcome.ok) throw invalidParams(`Invalid arguments for prompt "${name}": ${outcome.message}`);
          return outcome.value;
        },
      ),
    };
  }

  private completers(
    method: ProviderMethod,
    declared: McpCompleters | undefined,
    known: readonly string[],
  ): ResolvedCompleters {
    const resolved = new Map<string, ResolvedCompleter>();
    for (const [name, completer] of Object.entries(declared ?? {})) {
      if (!known.includes(name))
        throw new McpConfigurationError(unknownCompleterMessage(method.owner, name, [...known]));
      if (typeof completer === 'function') {
        resolved.set(name, async (value, context) => completer(value, context));
        continue;
      }
      if (typeof method.instance[completer] !== 'function') {
        throw new McpConfigurationError(missingCompleterMethodMessage(method.owner, name, String(completer)));
      }
      const invoke = createMethodInvoker(this.moduleRef, method, completer, this.logger, '');
      resolved.set(name, (value, context) => invoke(value, context));
    }
    return resolved;
  }

  /**
   * The invoker of a handler under `key`, through Nest's pipeline when the handler has enhancers
   * of its own or built-in guards (then with its `pipeline`, for lists), else the direct call.
   */
  private handler<K extends 'read' | 'get'>(
    method: ProviderMethod,
    decorator: string,
    publicOption: unknown,
    kind: McpHandlerKind,
    name: string,
    rpcMethod: string,
    refuse: RefusalFactory,
    key: K,
    validate?: (argument: unknown) => Promise<unknown>,
  ): { pipeline?: HandlerPipeline } & Record<K, MethodInvoker> {
    const isPublic = checkedPublic(decorator, method.owner, publicOption);
    const pipeline = handlerPipelineFor(
      this.moduleRef,
      this.contextCreator,
      method,
      builtInGuards(this.options.anonymous, isPublic),
    );
    if (!pipeline) return { [key]: this.invoker(method, decorator) } as Record<K, MethodInvoker>;
    return { pipeline, [key]: guardedInvoker(pipeline, kind, name, rpcMethod, refuse, validate) } as {
      pipeline: HandlerPipeline;
    } & Record<K, MethodInvoker>;
  }

  private invoker(method: ProviderMethod, kind: string): MethodInvoker {
    return createMethodInvoker(
      this.moduleRef,
      method,
      method.methodName,
      this.logger,
      requestScopedFeatureMessage(kind, method.owner),
    );
  }
}
