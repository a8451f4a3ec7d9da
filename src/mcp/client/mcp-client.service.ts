import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { McpCapabilityError } from '../errors/mcp-client-call.errors';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import type { McpCallToolResult } from '../interfaces/mcp-tool-context.interface';
import { McpMethod } from '../protocol/mcp-methods';
import type { McpResolvedClientOptions } from './config/client-options-resolver';
import type {
  McpCallEvent,
  McpCallJob,
  McpCallOptions,
  McpCallState,
  McpToolArguments,
} from './interfaces/mcp-call.interface';
import { MCP_CLIENT_OPTIONS } from './mcp-client.constants';
import { McpCallQueueHost } from './queue/mcp-call-queue-host';
import type { McpCallQueue } from './queue/mcp-call-queue.interface';
import { McpToolListCache } from './tool-list-cache';
import { routeTool, type McpServerTool, type McpToolCatalog, type McpToolDefinition } from './tool-router';
import { McpTransportRegistry } from './transports/transport-registry';
import { McpTaskNotSupportedError } from './mcp-task-call.errors';
import { taskSupportOf } from './tasks/task-support';
import { captureTraceCarrier } from '../telemetry/trace-carriers';

/** Most pages read from one paginated list before giving up (a server that never ends its list). */
const MAX_PAGES = 1000;

/**
 * Calls tools, prompts, resources and completions on the configured MCP servers. Every call is a
 * job on the module's queue (Bull on Redis, or inline), run by the same processor: typed errors
 * (`McpServerError`, `McpCapabilityError`, `McpTimeoutError`...) come back to the caller either way.
 * Provide client options on one mount per app; the service is exported under this class.
 */
@Injectable()
export class McpClientService implements OnModuleInit {
  private readonly logger = new Logger(McpClientService.name);
  private readonly listChangedListeners = new Set<McpClientService.ListChangedListener>();

  /** @internal Built by `McpClientModule`. */
  constructor(
    @Inject(MCP_CLIENT_OPTIONS) private readonly options: McpResolvedClientOptions,
    private readonly host: McpCallQueueHost,
    private readonly transports: McpTransportRegistry,
    private readonly toolLists: McpToolListCache,
  ) {}

  /**
   * Drops cached tool lists when a server announces a change, and passes
   * `notifications/elicitation/complete` to `handlers.elicitationComplete`.
   */
  onModuleInit(): void {
    this.queue.onNotification((server, notification) => {
      if (notification.method === McpMethod.ToolsListChanged) this.toolLists.drop(server);
      if (notification.method === McpMethod.ElicitationComplete) this.elicitationCompleted(server, notification.params);
      const kind = LIST_CHANGED_KINDS.get(notification.method);
      if (kind) this.listChanged(server, kind);
    });
  }

  /**
   * Calls `listener` whenever a server announces that its tools, prompts or resources changed
   * (`notifications/{kind}/list_changed`). Servers send these on a call's stream or on a
   * connection the client holds, so the listener runs in the process that ran that call (with
   * Bull, the worker's). Returns a function that removes the listener. A listener that throws is
   * logged and does not break the call.
   */
  onListChanged(listener: McpClientService.ListChangedListener): () => void {
    this.listChangedListeners.add(listener);
    return () => this.listChangedListeners.delete(listener);
  }

  private listChanged(server: string, kind: McpClientService.ListChangedKind): void {
    for (const listener of this.listChangedListeners) {
      try {
        listener(server, kind);
      } catch (error) {
        this.logger.warn(
          `A list-changed listener failed for MCP server "${server}": ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  }

  /** A listener that throws does not break the call whose stream carried the notification. */
  private elicitationCompleted(server: string, params: Record<string, unknown> | undefined): void {
    const listener = this.options.handlers.elicitationComplete;
    const elicitationId = params?.elicitationId;
    if (!listener || typeof elicitationId !== 'string') return;
    try {
      listener({ elicitationId }, { server });
    } catch (error) {
      this.logger.warn(
        `handlers.elicitationComplete failed for MCP server "${server}": ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /** Where calls run: `bull` (Redis) or `inline` (this process). */
  get mode(): 'bull' | 'inline' {
    return this.queue.mode;
  }

  /** The configured server names. */
  servers(): string[] {
    return this.transports.names();
  }

  /**
   * Every tool of a server (all pages), cached until the server announces a change. Tools with
   * invalid `x-mcp-header` annotations are left out (and logged); calling one fails with
   * `McpInvalidToolError`.
   */
  async listTools(server: string, options: McpCallOptions = {}): Promise<McpToolDefinition[]> {
    const scopeKey = this.scopeKey(server, options);
    return (
      await this.toolLists.get(server, scopeKey, () =>
        this.listAll<McpToolDefinition>(server, McpMethod.ToolsList, 'tools', { ...options, scopeKey }),
      )
    ).tools;
  }

  /** The tools of every server; servers without tools are skipped, those whose list cannot be read are logged and left out. */
  async listAllTools(options: McpCallOptions = {}): Promise<McpServerTool[]> {
    return (await this.catalog(options)).tools;
  }

  /** Calls a tool on a server and waits for its result (`isError` results are results, not errors). */
  callTool(
    server: string,
    name: string,
    args?: McpToolArguments,
    options?: McpCallOptions & { wait?: true },
  ): Promise<McpCallToolResult>;
  /** Enqueues a tool call on a server and resolves to its call id. */
  callTool(
    server: string,
    name: string,
    args: McpToolArguments | undefined,
    options: McpCallOptions & { wait: false },
  ): Promise<string>;
  /** Calls a tool on the one server that offers it. @throws McpAmbiguousToolError, McpToolNotFoundError */
  callTool(
    name: string,
    args?: McpToolArguments,
    options?: McpCallOptions & { wait?: true },
  ): Promise<McpCallToolResult>;
  /** Enqueues a call of a tool on the one server that offers it and resolves to its call id. */
  callTool(
    name: string,
    args: McpToolArguments | undefined,
    options: McpCallOptions & { wait: false },
  ): Promise<string>;
  async callTool(
    first: string,
    second?: string | McpToolArguments,
    third?: McpToolArguments | McpCallOptions,
    fourth?: McpCallOptions,
  ): Promise<McpCallToolResult | string> {
    const routed = typeof second !== 'string';
    const options = ((routed ? third : fourth) ?? {}) as McpCallOptions;
    const name = routed ? first : second;
    const args = ((routed ? second : third) ?? {}) as McpToolArguments;
    const server = routed ? routeTool(await this.catalog(options), name) : first;
    const params = { name, arguments: args, ...(options.meta ? { _meta: options.meta } : {}) };
    if (options.wait === false && (options.onProgress || options.onLog || options.signal || options.onServerRequest)) {
      throw new McpConfigurationError(
        `callTool("${name}") with { wait: false } cannot take onProgress, onLog, onServerRequest or signal: the call outlives this promise. Drop wait: false to watch or abort the call.`,
      );
    }
    const task = await this.taskOf(server, name, options);
    const called = { ...options, ...(task ? { task } : {}) };
    if (task && options.timeoutMs === undefined && task.ttlMs !== undefined) called.timeoutMs = task.ttlMs;
    return options.wait === false
      ? this.enqueue(server, McpMethod.ToolsCall, params, called)
      : (this.request(server, McpMethod.ToolsCall, params, called) as Promise<McpCallToolResult>);
  }

  /**
   * Whether a tool call runs as a task: asked with `options.task` (the tool's definition, from the
   * cached list or a listing, must not say `forbidden`), or required by a tool whose definition
   * is already cached. A tool the list does not show is called as asked.
   */
  private async taskOf(server: string, name: string, options: McpCallOptions): Promise<McpCallOptions['task']> {
    const scopeKey = this.scopeKey(server, options);
    const list = options.task
      ? this.listTools(server, options).then((tools) => tools.find((tool) => tool.name === name))
      : this.toolLists.cached(server, scopeKey)?.then((cached) => cached.tools.find((tool) => tool.name === name));
    const support = taskSupportOf(await list?.catch(() => undefined));
    if (options.task && support === 'forbidden') throw new McpTaskNotSupportedError(server, name);
    return options.task ?? (support === 'required' ? {} : undefined);
  }

  /** Enqueues a tool call and resolves to its id at once (`callTool(..., { wait: false })`). */
  enqueueToolCall(
    server: string,
    name: string,
    args: McpToolArguments = {},
    options: McpCallOptions = {},
  ): Promise<string> {
    return this.callTool(server, name, args, { ...options, wait: false });
  }

  /** The state of an enqueued call (Bull: read from Redis by any process; inline: this process only). */
  getCallResult(id: string): Promise<McpCallState> {
    return this.queue.state(id);
  }

  /**
   * Waits for an enqueued call: its result, or its typed error. With Bull it gives up after
   * `options.timeoutMs` (default: the client's `waitTimeoutMs`) with `McpCallWaitTimeoutError`,
   * and fails with `McpQueueUnavailableError` while Redis is unreachable.
   */
  waitForCall(id: string, options: { timeoutMs?: number } = {}): Promise<Record<string, unknown>> {
    return this.queue.wait(id, options.timeoutMs);
  }

  /** Every prompt of a server (all pages). */
  listPrompts(server: string, options: McpCallOptions = {}): Promise<Record<string, unknown>[]> {
    return this.listAll(server, McpMethod.PromptsList, 'prompts', options);
  }

  /** Gets a prompt with its arguments filled in. */
  getPrompt(
    server: string,
    name: string,
    args: Record<string, string> = {},
    options: McpCallOptions = {},
  ): Promise<Record<string, unknown>> {
    return this.request(server, McpMethod.PromptsGet, { name, arguments: args }, options);
  }

  /** Every resource of a server (all pages). */
  listResources(server: string, options: McpCallOptions = {}): Promise<Record<string, unknown>[]> {
    return this.listAll(server, McpMethod.ResourcesList, 'resources', options);
  }

  /** Every resource template of a server (all pages). */
  listResourceTemplates(server: string, options: McpCallOptions = {}): Promise<Record<string, unknown>[]> {
    return this.listAll(server, McpMethod.ResourcesTemplatesList, 'resourceTemplates', options);
  }

  /** Reads a resource. */
  readResource(server: string, uri: string, options: McpCallOptions = {}): Promise<Record<string, unknown>> {
    return this.request(server, McpMethod.ResourcesRead, { uri }, options);
  }

  /** Asks for completions of a prompt or resource-template argument. */
  complete(
    server: string,
    ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string },
    argument: { name: string; value: string },
    context?: { arguments?: Record<string, string> },
    options: McpCallOptions = {},
  ): Promise<Record<string, unknown>> {
    return this.request(
      server,
      McpMethod.CompletionComplete,
      { ref, argument, ...(context ? { context } : {}) },
      options,
    );
  }

  /** Sets the level of the log messages the server sends. */
  async setLogLevel(server: string, level: string, options: McpCallOptions = {}): Promise<void> {
    await this.request(server, McpMethod.LoggingSetLevel, { level }, options);
  }

  /** Pings a server (performs the handshake when the session is new). */
  async ping(server: string, options: McpCallOptions = {}): Promise<void> {
    await this.request(server, McpMethod.Ping, undefined, options);
  }

  /**
   * Sends any request through the queue and resolves to its JSON-RPC result. Every mistake
   * (an unknown server, a missing `scopeKey`) comes back as a rejection, never as a throw.
   */
  async request(
    server: string,
    method: string,
    params?: Record<string, unknown>,
    options: McpCallOptions = {},
  ): Promise<Record<string, unknown>> {
    const job = this.job(server, method, params, options);
    const { onProgress, onLog, signal, onServerRequest } = options;
    if (!onProgress && !onLog && !signal && !onServerRequest) return this.queue.execute(job);
    const onEvent = (event: McpCallEvent) => {
      try {
        if (event.kind === 'progress') onProgress?.(event.progress);
        else onLog?.(event.log);
      } catch (error) {
        this.logger.warn(
          `An onProgress/onLog callback of a call to "${server}" failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    };
    return this.queue.execute(job, {
      ...(onProgress || onLog ? { onEvent } : {}),
      ...(signal ? { signal } : {}),
      ...(onServerRequest ? { onServerRequest } : {}),
    });
  }

  private async enqueue(
    server: string,
    method: string,
    params: Record<string, unknown>,
    options: McpCallOptions,
  ): Promise<string> {
    return this.queue.submit(this.job(server, method, params, options));
  }

  private job(
    server: string,
    method: string,
    params: Record<string, unknown> | undefined,
    options: McpCallOptions,
  ): McpCallJob {
    const config = this.transports.config(server);
    const timeoutMs = options.timeoutMs ?? config.timeoutMs ?? this.options.defaultTimeoutMs;
    // One absolute deadline for the whole call, retries included: `timeoutMs` is the caller's.
    const job: McpCallJob = {
      server,
      method,
      ...(params ? { params } : {}),
      scopeKey: this.scopeKey(server, options),
      timeoutMs,
      deadlineAt: Date.now() + timeoutMs,
    };
    if (options.onProgress) {
      // A token of its own per call: concurrent calls never receive each other's progress.
      job.progressToken = randomUUID();
      const meta = params?._meta && typeof params._meta === 'object' ? (params._meta as Record<string, unknown>) : {};
      job.params = { ...(params ?? {}), _meta: { ...meta, progressToken: job.progressToken } };
    }
    if (options.onLog) job.forwardLogs = true;
    if (options.inputRequired === 'return') job.returnInputRequired = true;
    if (options.inputRetry) {
      const { inputResponses, requestState } = options.inputRetry;
      job.params = {
        ...(job.params ?? {}),
        ...(inputResponses !== undefined ? { inputResponses } : {}),
        ...(requestState !== undefined ? { requestState } : {}),
      };
    }
    if (options.task && method === McpMethod.ToolsCall) job.task = { ...options.task };
    const trace = captureTraceCarrier();
    if (trace) job.trace = trace;
    return job;
  }

  private scopeKey(server: string, options: McpCallOptions): string {
    if (this.transports.config(server).scope !== 'principal') return '';
    if (!options.scopeKey) {
      throw new McpConfigurationError(
        `MCP server "${server}" has scope 'principal': pass { scopeKey } (e.g. the user id) with every call to it.`,
      );
    }
    return options.scopeKey;
  }

  private async listAll<T>(server: string, method: string, field: string, options: McpCallOptions): Promise<T[]> {
    const items: T[] = [];
    let cursor: unknown;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await this.request(server, method, cursor === undefined ? {} : { cursor }, options);
      items.push(...((result[field] as T[] | undefined) ?? []));
      cursor = result.nextCursor;
      if (typeof cursor !== 'string' || !cursor) return items;
    }
    throw new Error(`MCP server "${server}" returned more than ${MAX_PAGES} pages for ${method}`);
  }

  private async catalog(options: McpCallOptions): Promise<McpToolCatalog> {
    const servers = this.servers();
    const lists = await Promise.allSettled(servers.map((server) => this.listTools(server, options)));
    const catalog: McpToolCatalog = { tools: [], unreachable: [] };
    lists.forEach((list, i) => {
      if (list.status === 'fulfilled') catalog.tools.push(...list.value.map((tool) => ({ server: servers[i], tool })));
      else if (!(list.reason instanceof McpCapabilityError)) {
        catalog.unreachable.push(servers[i]);
        this.logger.warn(`Listing the tools of "${servers[i]}" failed: ${(list.reason as Error).message}`);
      }
    });
    return catalog;
  }

  private get queue(): McpCallQueue {
    return this.host.queue;
  }
}

/** The types of `McpClientService`'s signatures. */
export declare namespace McpClientService {
  /** Which list a server announced as changed (see `McpClientService.onListChanged`). */
  export type ListChangedKind = 'tools' | 'prompts' | 'resources';

  /** Told that a server's list of `kind` changed (see `McpClientService.onListChanged`). */
  export type ListChangedListener = (server: string, kind: ListChangedKind) => void;
}

const LIST_CHANGED_KINDS = new Map<string, McpClientService.ListChangedKind>([
  [McpMethod.ToolsListChanged, 'tools'],
  [McpMethod.PromptsListChanged, 'prompts'],
  [McpMethod.ResourcesListChanged, 'resources'],
]);
