import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { McpConfigurationError } from '../../errors/mcp-configuration.errors';
import type { McpCompleter } from '../../interfaces/mcp-completion.interface';
import { unknownCompleterMessage } from '../../mcp.messages';
import type { McpPromptOptions } from '../../interfaces/mcp-prompt-options.interface';
import type {
  McpResourceOptions,
  McpResourceRequest,
  McpResourceTemplateOptions,
} from '../../interfaces/mcp-resource-options.interface';
import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import type { McpToolOptions, McpToolSchema } from '../../interfaces/mcp-tool-options.interface';
import type { McpToolArgs } from '../../interfaces/standard-schema.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { JsonRpcNotification } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import type { McpResolvedOptions } from '../config/mcp.options';
import {
  buildPromptEntry,
  buildResourceEntry,
  buildTemplateEntry,
  buildToolEntry,
} from '../catalog/handler-catalog.factory';
import { CompletionFeature } from '../features/completion.feature';
import { PromptsFeature } from '../features/prompts.feature';
import type { ResolvedCompleter, ResolvedCompleters } from '../features/registered-features';
import { ResourceSubscriptionsFeature } from '../features/resource-subscriptions.feature';
import { ResourcesFeature } from '../features/resources.feature';
import type { McpHandlerKind } from '../pipeline/mcp-execution-context';
import { McpMountBus, type McpRegistryBusMessage } from '../pubsub/mount-bus';
import { McpSessionBus } from '../sessions/mcp-session-bus';
import { McpListenStreams } from '../stateless/listen-stream-registry';
import { Toolset } from '../dispatch/toolset';
import { McpTaskService } from '../tasks/mcp-tasks.service';
import type { McpHandlerSwitchStore } from '../../persistence/interfaces/mcp-handler-switch-store.interface';
import { InjectMcpHandlerSwitchStore } from '../../persistence/mcp-persistence.constants';

/** The list a kind of handler belongs to, and the notification that says it changed. */
const LIST_CHANGED: Record<McpHandlerKind, string> = {
  tool: McpMethod.ToolsListChanged,
  prompt: McpMethod.PromptsListChanged,
  resource: McpMethod.ResourcesListChanged,
  resourceTemplate: McpMethod.ResourcesListChanged,
};

const RUNTIME_OWNER = 'McpRegistry';

/**
 * Changes what a mount serves while the app runs: adds and removes tools, prompts, resources and
 * resource templates, and switches any of them (decorated ones too) off and on, for everyone or
 * for some principals. Every change sends `notifications/<list>/list_changed` to the open session
 * GET streams and to the `subscriptions/listen` streams that asked for it, on every replica.
 *
 * Handlers are code: an added handler exists in the process that added it, so an app with several
 * replicas adds it on each one (at boot, or on a trigger every replica hears). Switches are data:
 * they are rows of the mount's `McpHandlerSwitchStore` (the database), announced over the bus,
 * applied on every replica and read by a replica that boots later.
 *
 * Inject it from the mount's module (`McpRegistry`, or `getMcpRegistryToken(mount)` with several mounts).
 *
 * @example
 * ```ts
 * constructor(private readonly registry: McpRegistry) {}
 * async onModuleInit() {
 *   await this.registry.addTool({ name: 'echo', description: 'Echoes', input: { type: 'object', properties: { text: { type: 'string' } } } }, ({ text }) => text);
 * }
 * hide(user: string) { return this.registry.disable('tool', 'echo', { principals: [user] }); }
 * ```
 */
@Injectable()
export class McpRegistry implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger: Logger;
  private readonly origin = randomBytes(9).toString('base64url');
  /** Numbers the reads of the switch store, so a slower older read never replaces a newer one. */
  private reads = 0;
  private applied = 0;
  private unsubscribe?: () => Promise<void>;

  /** @internal Built by the mount's module. */
  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly mountBus: McpMountBus,
    private readonly toolset: Toolset,
    private readonly prompts: PromptsFeature,
    private readonly resources: ResourcesFeature,
    private readonly subscriptions: ResourceSubscriptionsFeature,
    private readonly bus: McpSessionBus,
    private readonly listenStreams: McpListenStreams,
    @InjectMcpHandlerSwitchStore() private readonly store: McpHandlerSwitchStore,
    private readonly tasks: McpTaskService,
    private readonly completion: CompletionFeature,
  ) {
    this.logger = new Logger(`McpRegistry:${options.mount}`);
  }

  /** The mount this registry changes. */
  get mount(): string {
    return this.options.mount;
  }

  /** Reads the mount's stored switches and starts listening for other replicas' changes. */
  async onModuleInit(): Promise<void> {
    this.unsubscribe = await this.mountBus.subscribe('registry', (message) => this.receive(message));
    await this.reload();
  }

  /** Stops listening for other replicas' changes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.unsubscribe?.().catch(() => undefined);
  }

  /**
   * Adds a tool to this process; a name already served (decorated or added) is an
   * `McpConfigurationError`. With a Standard Schema or DTO `input`, the handler's arguments are
   * typed from it (`McpToolArgs`).
   */
  async addTool<I extends McpToolSchema | undefined = undefined>(
    tool: McpRegistry.Tool<I>,
    handler: McpRegistry.ToolHandler<I>,
  ): Promise<void> {
    // A runtime tool has no access options of its own (the switches and `anonymous` do that
    // job), so any that slipped past the type are dropped rather than half-applied.
    const declaration = { ...tool, scopes: undefined, roles: undefined, public: undefined };
    const built = buildToolEntry(declaration, `${RUNTIME_OWNER}#addTool(${tool.name})`, RUNTIME_OWNER);
    const { taskSupport } = built;
    this.toolset.register({ ...built, invoke: async (args, context) => handler(args as McpToolArgs<I>, context) });
    // The mount's first tool that allows tasks starts its task queue and the tasks/* methods;
    // a tool whose queue cannot start (Redis down) is not left behind half-served.
    if (taskSupport === 'optional' || taskSupport === 'required') {
      try {
        await this.tasks.start();
      } catch (error) {
        this.toolset.unregister(tool.name);
        throw error;
      }
    }
    this.added('tool', tool.name);
    await this.announce('tool', false);
  }

  /** Removes a tool (decorated or added) from this process; resolves false when there was none. */
  async removeTool(name: string): Promise<boolean> {
    if (!this.toolset.unregister(name)) return false;
    this.toolset.switches.authenticatedOnlyFor('tool', name, false);
    await this.announce('tool', false);
    return true;
  }

  /** Adds a prompt to this process; a name already served is an `McpConfigurationError`. */
  async addPrompt(prompt: McpRegistry.Prompt, handler: McpRegistry.Handler): Promise<void> {
    const { complete, ...declaration } = prompt;
    const { name } = declaration;
    const owner = `${RUNTIME_OWNER}#addPrompt(${name})`;
    const { entry, argumentNames } = buildPromptEntry(declaration, owner);
    const completers = this.completers(owner, complete, argumentNames);
    this.prompts.add({ ...entry, completers, get: async (args, context) => handler(args, context) });
    this.prompts.install();
    if (completers.size) this.completion.install();
    this.added('prompt', name);
    await this.announce('prompt', false);
  }

  /** Removes a prompt from this process; resolves false when there was none. */
  async removePrompt(name: string): Promise<boolean> {
    if (!this.prompts.remove(name)) return false;
    this.toolset.switches.authenticatedOnlyFor('prompt', name, false);
    await this.announce('prompt', false);
    return true;
  }

  /** Adds a resource at a fixed URI to this process; a URI already served is an `McpConfigurationError`. */
  async addResource(resource: McpRegistry.Resource, handler: McpRegistry.ResourceHandler): Promise<void> {
    const { uri } = resource;
    const built = buildResourceEntry(resource, `${RUNTIME_OWNER}#addResource(${uri})`);
    this.resources.addResource({ ...built, read: async (request, context) => handler(request, context) });
    this.installResources();
    this.added('resource', uri);
    await this.announce('resource', false);
  }

  /** Removes a resource from this process; resolves false when there was none at that URI. */
  async removeResource(uri: string): Promise<boolean> {
    if (!this.resources.removeResource(uri)) return false;
    this.toolset.switches.authenticatedOnlyFor('resource', uri, false);
    await this.announce('resource', false);
    return true;
  }

  /** Adds a resource template to this process; a template already served is an `McpConfigurationError`. */
  async addResourceTemplate(
    template: McpRegistry.ResourceTemplate,
    handler: McpRegistry.ResourceHandler,
  ): Promise<void> {
    const { complete, ...declaration } = template;
    const { uriTemplate } = declaration;
    const owner = `${RUNTIME_OWNER}#addResourceTemplate(${uriTemplate})`;
    const built = buildTemplateEntry(declaration, owner);
    const completers = this.completers(owner, complete, built.template.variables);
    this.resources.addTemplate({
      ...built,
      completers,
      read: async (request, context) => handler(request, context),
    });
    this.installResources();
    if (completers.size) this.completion.install();
    this.added('resourceTemplate', uriTemplate);
    await this.announce('resourceTemplate', false);
  }

  /** Removes a resource template from this process; resolves false when there was none. */
  async removeResourceTemplate(uriTemplate: string): Promise<boolean> {
    if (!this.resources.removeTemplate(uriTemplate)) return false;
    this.toolset.switches.authenticatedOnlyFor('resourceTemplate', uriTemplate, false);
    await this.announce('resourceTemplate', false);
    return true;
  }

  /**
   * Switches a handler off (decorated or added; `name` is the tool or prompt name, the resource URI
   * or the template string), for everyone or for `principals`: it leaves their lists, and a call
   * answers as for an unknown handler. Stored in the mount's `McpHandlerSwitchStore` (so it lasts
   * and a replica booted later reads it), then announced to every replica. Rejects with
   * `McpDatabaseUnavailableError` when the store cannot be reached in `database.timeoutMs`.
   */
  async disable(kind: McpHandlerKind, name: string, options: McpRegistry.SwitchOptions = {}): Promise<void> {
    await this.store.disable(kind, name, this.principalsOf(options));
    await this.reload();
    await this.announce(kind, true);
  }

  /**
   * Switches a handler on again: for `principals` (lifting their own switch only), or without
   * them for everyone (lifting every switch of that handler). Rejects like `disable`.
   */
  async enable(kind: McpHandlerKind, name: string, options: McpRegistry.SwitchOptions = {}): Promise<void> {
    await this.store.enable(kind, name, this.principalsOf(options));
    await this.reload();
    await this.announce(kind, true);
  }

  /** The principal keys of a switch, or null for everyone; an empty key is refused (the store's "everyone"). */
  private principalsOf(options: McpRegistry.SwitchOptions): readonly string[] | null {
    if (!options.principals) return null;
    if (options.principals.some((key) => typeof key !== 'string' || key === '')) {
      throw new McpConfigurationError(
        `McpRegistry: principal keys must be non-empty strings (got ${JSON.stringify(options.principals)})`,
      );
    }
    return options.principals;
  }

  /** The completers of a runtime prompt or template, each keyed by one of its argument or variable names. */
  private completers(
    owner: string,
    declared: Readonly<Record<string, McpCompleter>> | undefined,
    known: readonly string[],
  ): ResolvedCompleters {
    const resolved = new Map<string, ResolvedCompleter>();
    for (const [name, completer] of Object.entries(declared ?? {})) {
      if (!known.includes(name)) throw new McpConfigurationError(unknownCompleterMessage(owner, name, [...known]));
      resolved.set(name, async (value, context) => completer(value, context));
    }
    return resolved;
  }

  private added(kind: McpHandlerKind, name: string): void {
    if (this.options.anonymous) this.toolset.switches.authenticatedOnlyFor(kind, name, true);
  }

  private installResources(): void {
    if (this.resources.installed) return;
    this.resources.install();
    this.subscriptions.install();
  }

  /** Reads the switches of the mount and applies them, unless a read started later was applied first. */
  private async reload(): Promise<void> {
    const read = ++this.reads;
    const switches = await this.store.list();
    if (read < this.applied) return;
    this.applied = read;
    this.toolset.switches.replace(switches);
  }

  /** Tells this replica's streams, then the other replicas (which reload the switches first when `switched`). */
  private async announce(kind: McpHandlerKind, switched: boolean): Promise<void> {
    const method = LIST_CHANGED[kind];
    await this.notifyHere(method);
    if (this.mountBus.distributed) await this.mountBus.publish('registry', { o: this.origin, m: method, r: switched });
  }

  private async notifyHere(method: string): Promise<void> {
    const notification: JsonRpcNotification = { jsonrpc: '2.0', method };
    this.listenStreams.deliverHere(notification);
    await this.bus.notifyStreamsHere(notification);
  }

  private async receive(message: McpRegistryBusMessage): Promise<void> {
    if (message.o === this.origin || !Object.values(LIST_CHANGED).includes(message.m)) return;
    try {
      if (message.r) await this.reload();
      await this.notifyHere(message.m);
    } catch (error) {
      this.logger.warn(`Could not apply a registry change from another replica: ${(error as Error)?.message ?? error}`);
    }
  }
}

/** Injection token of a mount's `McpRegistry` (for apps with several mounts). */
export function getMcpRegistryToken(mount: string): string {
  return `MCP_REGISTRY:${mount}`;
}

/** What `McpRegistry`'s methods take: `McpRegistry.Tool`, `McpRegistry.Handler` and the rest. */
export declare namespace McpRegistry {
  /**
   * A tool added at run time: the options of `@McpTool` with a required name, without `public`,
   * `scopes` and `roles`; `I` is the type of its `input`.
   */
  export type Tool<I extends McpToolSchema | undefined = McpToolSchema | undefined> = Omit<
    McpToolOptions,
    'name' | 'public' | 'scopes' | 'roles' | 'input'
  > & { name: string; input?: I };

  /** The handler of a runtime tool: its arguments typed from its `input` (`McpToolArgs`), and the handler context. */
  export type ToolHandler<I extends McpToolSchema | undefined = undefined> = (
    args: McpToolArgs<I>,
    context: McpToolContext,
  ) => unknown;

  /**
   * A prompt added at run time: the options of `@McpPrompt` with a required name, without
   * `public`; its `complete` holds functions (there is no provider to name a method of).
   */
  export type Prompt = Omit<McpPromptOptions, 'name' | 'public' | 'complete'> & {
    name: string;
    complete?: Readonly<Record<string, McpCompleter>>;
  };

  /** A resource added at run time: the options of `@McpResource` with a required name, without `public`. */
  export type Resource = Omit<McpResourceOptions, 'name' | 'public'> & { name: string };

  /**
   * A resource template added at run time: the options of `@McpResourceTemplate` with a required
   * name, without `public`; its `complete` holds functions, keyed by template variable.
   */
  export type ResourceTemplate = Omit<McpResourceTemplateOptions, 'name' | 'public' | 'complete'> & {
    name: string;
    complete?: Readonly<Record<string, McpCompleter>>;
  };

  /** The handler of a runtime tool or prompt: the validated arguments and the handler context, as a decorated method gets them. */
  export type Handler = (args: any, context: McpToolContext) => unknown; // eslint-disable-line @typescript-eslint/no-explicit-any -- a handler declares its own argument type

  /** The handler of a runtime resource or template: the URI read (and the template's variables). */
  export type ResourceHandler = (request: McpResourceRequest, context: McpToolContext) => unknown;

  /** Who `enable` and `disable` apply to. */
  export interface SwitchOptions {
    /**
     * Principal keys (`McpPrincipal.key`) the change applies to. Without it, `disable` hides the
     * handler from everyone and `enable` shows it to everyone again (lifting the per-principal
     * switches too).
     */
    principals?: readonly string[];
  }
}
