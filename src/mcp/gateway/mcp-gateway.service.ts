import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { McpCallOptions } from '../client/interfaces/mcp-call.interface';
import { McpClientService } from '../client/mcp-client.service';
import type { McpToolDefinition } from '../client/tool-router';
import { McpCapabilityError } from '../errors/mcp-client-call.errors';
import { McpServerError } from '../errors/mcp-client.errors';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import { McpRpcError } from '../errors/mcp-rpc.errors';
import type { McpCompleter, McpCompletionList } from '../interfaces/mcp-completion.interface';
import type { McpCallToolResult, McpRoundState, McpToolContext } from '../interfaces/mcp-tool-context.interface';
import { JsonRpcErrorCode } from '../protocol/jsonrpc';
import type { McpLogLevel } from '../protocol/log-levels';
import { McpMethod } from '../protocol/mcp-methods';
import { ResultType } from '../protocol/stateless';
import { getMcpMountBusToken, McpMountBus, type McpGatewayBusMessage } from '../server/pubsub/mount-bus';
import { McpRegistry, getMcpRegistryToken } from '../server/registry/mcp-registry';
import { InputRequiredSignal } from '../server/stateless/input-channel';
import { MCP_GATEWAY_OPTIONS } from './mcp-gateway.constants';
import type { McpGatewayModuleOptions, McpResolvedGatewayOptions } from './mcp-gateway.options';
import { askCaller, keptRound, stateOf, UPSTREAM_ROUND, upstreamRound } from './upstream-input-rounds';
import { refuseWhileListing, UpstreamCallRelay } from './upstream-request-relay';
import { UpstreamSelection } from './upstream-selection';

type McpGatewayCapability = McpGatewayModuleOptions.Capability;
/** A list the gateway reads: one per capability, and the resource templates with the resources. */
type McpGatewayList = McpGatewayCapability | 'resourceTemplates';

/** The most `input_required` rounds of an upstream the gateway answers within one round of its caller. */
const MAX_PASSED_ROUNDS = 10;

/** The most pages of one list the gateway reads from an upstream. */
const MAX_PAGES = 100;

/** What the mount serves for one upstream: per capability, each served key with the definition it was built from. */
interface ServedUpstream {
  upstream: Required<McpGatewayModuleOptions.Upstream>;
  selection: UpstreamSelection;
  served: Record<McpGatewayList, Map<string, string>>;
  /** The last refresh of each list: refreshes of one list run one after the other. */
  refreshing: Partial<Record<McpGatewayList, Promise<void>>>;
  /** The refresh of each list that waits for the one under way, if any. */
  waiting: Partial<Record<McpGatewayList, Promise<void>>>;
  /** Whether the last reading of each list failed (logged once per outage). */
  failing: Partial<Record<McpGatewayList, boolean>>;
}

/** The method and result field of each list, and the entry field that names what it serves. */
const LISTS: Record<McpGatewayList, { method: string; field: string; key: string }> = {
  tools: { method: McpMethod.ToolsList, field: 'tools', key: 'name' },
  prompts: { method: McpMethod.PromptsList, field: 'prompts', key: 'name' },
  resources: { method: McpMethod.ResourcesList, field: 'resources', key: 'uri' },
  resourceTemplates: { method: McpMethod.ResourcesTemplatesList, field: 'resourceTemplates', key: 'uriTemplate' },
};

/** The lists of a capability: the resource templates belong to `resources` (one list_changed announces both). */
function listsOf(kind: McpGatewayCapability): McpGatewayList[] {
  return kind === 'resources' ? ['resources', 'resourceTemplates'] : [kind];
}

/** The variable names of an RFC 6570 template (`{a}`, `{+a}`, `{?a,b}`...). */
function templateVariables(uriTemplate: string): string[] {
  return [...uriTemplate.matchAll(/\{([^}]*)\}/g)].flatMap((match) =>
    match[1]
      .replace(/^[+#./;?&]/, '')
      .split(',')
      .map((name) => name.replace(/(\*|:\d+)$/, ''))
      .filter((name) => name !== ''),
  );
}

/**
 * Re-serves, on one mount, the tools, prompts, resources and resource templates of servers
 * declared in `McpClientModule` (`McpGatewayModule.forRoot`). The lists are read at boot,
 * whenever an upstream announces a change (on every replica, when the mount has Redis), and
 * every `refreshIntervalMs`; what changed is added to or removed from the mount's `McpRegistry`,
 * whose list-changed notifications reach the mount's clients on every replica. Each call goes through
 * `McpClientService` (so it is queued where the client's queue is, and written as an outbound
 * row next to the mount's inbound one, in the same trace), with the caller's principal key as
 * the scope key, the caller's signal, and the upstream's progress and log messages passed on.
 * An upstream that fails answers a tool error; the mount's own handlers are never affected.
 */
@Injectable()
export class McpGateway implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger: Logger;
  private client!: McpClientService;
  private registry!: McpRegistry;
  private readonly upstreams = new Map<string, ServedUpstream>();
  private timer?: NodeJS.Timeout;
  private stopListening?: () => void;
  private unsubscribe?: () => Promise<void>;
  private stopped = false;
  /** This process on the mount's gateway channel: its own announcements are not read back. */
  private readonly origin = randomBytes(9).toString('base64url');

  /** @internal Built by `McpGatewayModule`. */
  constructor(
    @Inject(MCP_GATEWAY_OPTIONS) private readonly options: McpResolvedGatewayOptions,
    private readonly moduleRef: ModuleRef,
  ) {
    this.logger = new Logger(`McpGateway:${options.mount}`);
    for (const upstream of options.upstreams) {
      this.upstreams.set(upstream.server, {
        upstream,
        selection: new UpstreamSelection(upstream),
        served: { tools: new Map(), prompts: new Map(), resources: new Map(), resourceTemplates: new Map() },
        refreshing: {},
        waiting: {},
        failing: {},
      });
    }
  }

  /** Finds the client and the mount, then serves what the upstreams list (an upstream that is down is read again later). */
  async onApplicationBootstrap(): Promise<void> {
    this.client = this.find(McpClientService, 'McpClientService: import McpClientModule.forRoot(...)');
    this.registry = this.find<McpRegistry>(
      getMcpRegistryToken(this.options.mount),
      `the mount "${this.options.mount}": import McpModule.forRoot(...) with that mount`,
    );
    const known = new Set(this.client.servers());
    for (const server of this.upstreams.keys()) {
      if (!known.has(server))
        throw new McpConfigurationError(
          `McpGatewayModule: upstream "${server}" is not a server of McpClientModule (known: ${[...known].join(', ') || 'none'}).`,
        );
    }
    const bus = this.find<McpMountBus>(
      getMcpMountBusToken(this.options.mount),
      `the mount "${this.options.mount}": import McpModule.forRoot(...) with that mount`,
    );
    // Only the process that ran the call hears the upstream's notification: on a distributed bus
    // it tells the other replicas, which read that list again at once instead of at their next
    // refreshIntervalMs.
    if (bus.distributed) this.unsubscribe = await bus.subscribe('gateway', (message) => this.heard(message));
    this.stopListening = this.client.onListChanged((server, kind) => {
      if (!this.upstreams.has(server)) return;
      void this.refresh(server, [kind]);
      if (bus.distributed)
        bus
          .publish('gateway', { o: this.origin, s: server, k: kind })
          .catch((error: unknown) =>
            this.logger.warn(
              `Could not tell the other replicas that the ${kind} of upstream "${server}" changed: ${messageOf(error)}`,
            ),
          );
    });
    await this.refresh();
    if (this.options.refreshIntervalMs > 0) {
      this.timer = setInterval(() => void this.refresh(), this.options.refreshIntervalMs);
      this.timer.unref();
    }
  }

  /** Stops refreshing, and waits for the refreshes under way (they write audit rows). */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.stopListening?.();
    await this.unsubscribe?.().catch(() => undefined);
    await Promise.all([...this.upstreams.values()].flatMap((served) => Object.values(served.refreshing)));
  }

  /**
   * Reads the lists of one upstream (or of all) again now and re-serves what changed. Never
   * rejects: an upstream that cannot be read keeps what the mount served of it, and is logged.
   */
  async refresh(server?: string, kinds?: readonly McpGatewayModuleOptions.Capability[]): Promise<void> {
    const targets = server === undefined ? [...this.upstreams.values()] : [this.upstreams.get(server)];
    await Promise.all(
      targets.flatMap((served) =>
        served
          ? served.upstream.serve
              .filter((kind) => !kinds || kinds.includes(kind))
              .flatMap(listsOf)
              .map((list) => this.queueRefresh(served, list))
          : [],
      ),
    );
  }

  /**
   * The names (tools, prompts), URIs (resources) and URI templates (resource templates) the mount
   * serves for an upstream right now.
   */
  served(server: string): Record<McpGatewayModuleOptions.Capability | 'resourceTemplates', string[]> {
    const served = this.upstreams.get(server)?.served;
    return {
      tools: [...(served?.tools.keys() ?? [])],
      prompts: [...(served?.prompts.keys() ?? [])],
      resources: [...(served?.resources.keys() ?? [])],
      resourceTemplates: [...(served?.resourceTemplates.keys() ?? [])],
    };
  }

  /** Another replica heard an upstream announce a change: read that list again here. */
  private async heard(message: McpGatewayBusMessage): Promise<void> {
    if (message.o === this.origin || !this.upstreams.has(message.s)) return;
    await this.refresh(message.s, [message.k]);
  }

  private find<T>(token: string | (abstract new (...args: never[]) => T), what: string): T {
    try {
      return this.moduleRef.get<T>(token, { strict: false });
    } catch {
      throw new McpConfigurationError(`McpGatewayModule needs ${what}.`);
    }
  }

  /**
   * Runs a refresh of one capability after the one under way. Asks made while one waits to run
   * share it: a slow upstream (an outage) never piles up refreshes.
   */
  private queueRefresh(served: ServedUpstream, kind: McpGatewayList): Promise<void> {
    const waiting = served.waiting[kind];
    if (waiting) return waiting;
    const run = () => {
      served.waiting[kind] = undefined;
      if (this.stopped) return Promise.resolve();
      return this.refreshOne(served, kind).catch((error: unknown) =>
        this.logger.warn(
          `Could not re-serve the ${listName(kind)} of upstream "${served.upstream.server}": ${messageOf(error)}`,
        ),
      );
    };
    const next = (served.refreshing[kind] ?? Promise.resolve()).then(run);
    served.waiting[kind] = next;
    served.refreshing[kind] = next;
    return next;
  }

  private async refreshOne(served: ServedUpstream, kind: McpGatewayList): Promise<void> {
    const { server } = served.upstream;
    let listed: Record<string, unknown>[];
    try {
      listed = await this.list(server, kind);
    } catch (error) {
      if (!served.failing[kind])
        this.logger.warn(
          `Could not read the ${listName(kind)} of upstream "${server}" (what it served stays): ${messageOf(error)}`,
        );
      served.failing[kind] = true;
      return;
    }
    if (served.failing[kind]) this.logger.log(`Read the ${listName(kind)} of upstream "${server}" again`);
    served.failing[kind] = false;
    const wanted = new Map<string, Record<string, unknown>>();
    for (const entry of listed) {
      const upstreamKey = entry[LISTS[kind].key];
      if (typeof upstreamKey !== 'string' || !served.selection.selects(upstreamKey)) continue;
      const prefixed = kind === 'tools' || kind === 'prompts';
      wanted.set(prefixed ? `${served.upstream.prefix}${upstreamKey}` : upstreamKey, entry);
    }
    const current = served.served[kind];
    for (const key of [...current.keys()]) {
      const entry = wanted.get(key);
      if (entry && JSON.stringify(entry) === current.get(key)) continue;
      await this.remove(kind, key);
      current.delete(key);
    }
    for (const [key, entry] of wanted) {
      if (current.has(key)) continue;
      try {
        await this.add(served.upstream, kind, key, entry);
        current.set(key, JSON.stringify(entry));
      } catch (error) {
        this.logger.warn(`Not serving ${kindName(kind)} "${key}" of upstream "${server}": ${messageOf(error)}`);
      }
    }
  }

  /** Every page of one list, read afresh (not from the client's tool-list cache). */
  private async list(server: string, kind: McpGatewayList): Promise<Record<string, unknown>[]> {
    const { method, field } = LISTS[kind];
    const items: Record<string, unknown>[] = [];
    let cursor: unknown;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await this.client
        .request(server, method, cursor === undefined ? {} : { cursor }, {
          scopeKey: this.options.listScopeKey,
          // Announce what the calls relay, so that an upstream whose tools depend on the client's
          // capabilities (elicitation, sampling, roots) lists the ones its callers can use.
          onServerRequest: refuseWhileListing,
        })
        .catch((error: unknown): Record<string, unknown> => {
          // An upstream without resources, or with resources but no templates, serves none.
          if (kind === 'resourceTemplates' && servesNone(error)) return {};
          throw error;
        });
      const entries = result[field];
      if (Array.isArray(entries)) items.push(...(entries as Record<string, unknown>[]));
      cursor = result.nextCursor;
      if (typeof cursor !== 'string' || cursor === '') return items;
    }
    return items;
  }

  private async remove(kind: McpGatewayList, key: string): Promise<void> {
    if (kind === 'tools') await this.registry.removeTool(key);
    else if (kind === 'prompts') await this.registry.removePrompt(key);
    else if (kind === 'resources') await this.registry.removeResource(key);
    else await this.registry.removeResourceTemplate(key);
  }

  private async add(
    upstream: Required<McpGatewayModuleOptions.Upstream>,
    kind: McpGatewayList,
    key: string,
    entry: Record<string, unknown>,
  ): Promise<void> {
    const { server } = upstream;
    const name = String(entry.name);
    const common = {
      ...(typeof entry.title === 'string' ? { title: entry.title } : {}),
      ...(Array.isArray(entry.icons) ? { icons: entry.icons as McpRegistry.Tool['icons'] } : {}),
    };
    if (kind === 'tools') {
      const tool = entry as McpToolDefinition;
      await this.registry.addTool(
        {
          name: key,
          ...common,
          description: typeof tool.description === 'string' ? tool.description : `${name} of ${server}`,
          input: tool.inputSchema,
          ...(tool.outputSchema ? { output: tool.outputSchema } : {}),
          ...(tool.annotations ? { annotations: tool.annotations } : {}),
        },
        (args: Record<string, unknown> | undefined, context: McpToolContext) =>
          this.callTool(server, name, args ?? {}, context),
      );
    } else if (kind === 'prompts') {
      const promptArguments = Array.isArray(entry.arguments)
        ? (entry.arguments as McpRegistry.Prompt['arguments'] & Array<{ name?: unknown }>)
        : undefined;
      await this.registry.addPrompt(
        {
          name: key,
          ...common,
          ...(typeof entry.description === 'string' ? { description: entry.description } : {}),
          ...(promptArguments ? { arguments: promptArguments } : {}),
          complete: this.completers(
            server,
            { type: 'ref/prompt', name },
            (promptArguments ?? []).map((argument) => argument.name).filter((n): n is string => typeof n === 'string'),
          ),
        },
        (args: Record<string, string> | undefined, context: McpToolContext) =>
          this.client.getPrompt(server, name, args ?? {}, { scopeKey: context.principal.key, signal: context.signal }),
      );
    } else if (kind === 'resourceTemplates') {
      await this.registry.addResourceTemplate(
        {
          name: `${upstream.prefix}${name}`,
          uriTemplate: key,
          ...common,
          ...(typeof entry.description === 'string' ? { description: entry.description } : {}),
          ...(typeof entry.mimeType === 'string' ? { mimeType: entry.mimeType } : {}),
          complete: this.completers(server, { type: 'ref/resource', uri: key }, templateVariables(key)),
        },
        (request, context) =>
          this.client.readResource(server, request.uri, { scopeKey: context.principal.key, signal: context.signal }),
      );
    } else {
      await this.registry.addResource(
        {
          name: `${upstream.prefix}${name}`,
          uri: key,
          ...common,
          ...(typeof entry.description === 'string' ? { description: entry.description } : {}),
          ...(typeof entry.mimeType === 'string' ? { mimeType: entry.mimeType } : {}),
        },
        (request, context) =>
          this.client.readResource(server, request.uri, { scopeKey: context.principal.key, signal: context.signal }),
      );
    }
  }

  /**
   * A call for a 2026-07-28 caller: an upstream's `input_required` (a 2026-07-28 upstream) is
   * passed on as such. Its requests go to the caller under keys of their own, its `requestState`
   * is kept in the caller's round (sealed in the mount's own `requestState`), and the caller's
   * retry sends the upstream its answers with that state, so the upstream tool goes on from where
   * it asked instead of running again from the start. A 2025 upstream's requests travel through
   * the relay as for any caller.
   */
  private async callPassingInput(
    server: string,
    name: string,
    args: Record<string, unknown>,
    context: McpToolContext,
    round: McpRoundState,
    options: McpCallOptions & { wait?: true },
  ): Promise<McpCallToolResult> {
    let upstream = keptRound(round.get(UPSTREAM_ROUND));
    let retry: McpCallOptions['inputRetry'];
    if (upstream) retry = { inputResponses: await askCaller(context, upstream), ...stateOf(upstream) };
    // Bounded like the client's own rounds: a caller that answers up front cannot loop forever.
    for (let rounds = 0; rounds <= MAX_PASSED_ROUNDS; rounds++) {
      const result = (await this.client.callTool(server, name, args, {
        ...options,
        inputRequired: 'return',
        ...(retry ? { inputRetry: retry } : {}),
      })) as McpCallToolResult & { resultType?: unknown };
      if (result.resultType !== ResultType.InputRequired) {
        round.set(UPSTREAM_ROUND, undefined);
        return result;
      }
      upstream = upstreamRound(server, result, upstream?.round ?? 0);
      round.set(UPSTREAM_ROUND, JSON.stringify(upstream));
      retry = { inputResponses: await askCaller(context, upstream), ...stateOf(upstream) };
    }
    throw new Error(`it still required input after ${MAX_PASSED_ROUNDS} rounds`);
  }

  /**
   * A completer per argument (or template variable) that asks the upstream: its values, total and
   * hasMore come back as the upstream gave them. An upstream that declares no completions gives
   * no suggestion; its JSON-RPC errors reach the caller with their code.
   */
  private completers(
    server: string,
    ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string },
    names: readonly string[],
  ): Record<string, McpCompleter> {
    const complete =
      (name: string): McpCompleter =>
      async (value, context) => {
        try {
          const result = await this.client.complete(
            server,
            ref,
            { name, value },
            Object.keys(context.arguments).length ? { arguments: context.arguments } : undefined,
            { scopeKey: context.principal.key, signal: context.signal },
          );
          return result.completion as McpCompletionList;
        } catch (error) {
          if (error instanceof McpCapabilityError) return [];
          if (error instanceof McpServerError) throw new McpRpcError(error.code, error.error.message, error.data);
          throw error;
        }
      };
    return Object.fromEntries(names.map((name) => [name, complete(name)]));
  }

  /** One call of an upstream tool for a caller of the mount; a failure of the upstream is the caller's tool error. */
  private async callTool(
    server: string,
    name: string,
    args: Record<string, unknown>,
    context: McpToolContext,
  ): Promise<McpCallToolResult> {
    // The caller's client answers the upstream's requests (a Bull worker relays them through Redis).
    const relay = new UpstreamCallRelay(context);
    const options: McpCallOptions & { wait?: true } = {
      scopeKey: context.principal.key,
      signal: relay.signal,
      onProgress: (progress) =>
        void context.progress(progress.progress, progress.total, progress.message).catch(() => undefined),
      onLog: (message) =>
        void context.log(message.level as McpLogLevel, message.data, message.logger).catch(() => undefined),
      onServerRequest: relay.answer,
    };
    try {
      const result = context.round
        ? await this.callPassingInput(server, name, args, context, context.round, options)
        : await this.client.callTool(server, name, args, options);
      relay.rethrowStop();
      return result;
    } catch (error) {
      if (error instanceof InputRequiredSignal) throw error;
      relay.rethrowStop();
      return {
        content: [{ type: 'text', text: `The upstream server "${server}" could not run ${name}: ${messageOf(error)}` }],
        isError: true,
      };
    }
  }
}

function kindName(kind: McpGatewayList): string {
  return kind === 'tools'
    ? 'tool'
    : kind === 'prompts'
      ? 'prompt'
      : kind === 'resources'
        ? 'resource'
        : 'resource template';
}

/** An upstream's answer that it has no such list: the capability is not declared, or the method is unknown. */
function servesNone(error: unknown): boolean {
  return (
    error instanceof McpCapabilityError ||
    (error instanceof McpServerError && error.code === JsonRpcErrorCode.MethodNotFound)
  );
}

function listName(kind: McpGatewayList): string {
  return kind === 'resourceTemplates' ? 'resource templates' : kind;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
