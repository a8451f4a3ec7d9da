import { Logger } from '@nestjs/common';
import type { McpDeliveryContext, McpMessageHandler } from '../../interfaces/mcp-delivery.interface';
import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { duplicateToolMessage } from '../../mcp.messages';
import {
  JsonRpcErrorCode,
  jsonRpcError,
  jsonRpcResult,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { isSupportedSessionVersion, negotiateProtocolVersion } from '../../protocol/revisions';
import { tasksServerCapability } from '../../protocol/tasks';
import { decodeCursor, encodeCursor } from '../tools/list-cursor';
import type { RegisteredTool } from '../tools/registered-tool';
import { HandlerCatalog } from '../pipeline/handler-catalog';
import { missingScopes } from '../pipeline/missing-scopes';
import { auditNoteOf, hasSomeRole, McpRefusedError, withAuditNote } from '../pipeline/handler-refusal';
import { McpLimitExceededError, retryAfterHeader, withHttpStatus } from '../config/limit-exceeded.errors';
import { HandlerSwitches } from '../pipeline/handler-switches';
import { InFlightRequests } from './in-flight-requests';
import { ToolInvoker, type McpTaskStarter } from './tool-invoker';
import { executionInfoOf } from '../pipeline/mcp-execution-context';
import { McpMemoryRateCounter } from '../ratelimit/rate-counter';
import { ToolRateLimits } from '../ratelimit/tool-rate-limits';

/** True when `tool` may run as a task. */
function allowsTasks(tool: RegisteredTool): boolean {
  return tool.taskSupport === 'optional' || tool.taskSupport === 'required';
}

/**
 * Handles one request method. Resolves to the result object; rejects with `McpRpcError` for a
 * JSON-RPC error, or with anything else for a failure that is not the caller's (HTTP 5xx).
 */
export type McpMethodHandler = (
  request: JsonRpcRequest,
  context: McpDeliveryContext,
) => Promise<Record<string, unknown>>;

/** What a toolset announces about itself in `initialize`. */
export interface ToolsetIdentity {
  /** The server's name (`serverInfo.name`). */
  name: string;
  /** The server's version (`serverInfo.version`). */
  version: string;
  /** A name to show to people (`serverInfo.title`), when set. */
  title?: string;
  /** Instructions for the model (`instructions` of the `initialize` result), when set. */
  instructions?: string;
}

/**
 * The tools (and the other features) of one mount, and the one place JSON-RPC messages reach
 * them (`deliver`). It knows nothing about HTTP, sessions or the database: callers bring an
 * authenticated context. Features beyond tools plug in with `handle` and `declareCapability`.
 */
export class Toolset implements McpMessageHandler {
  private readonly logger: Logger;
  private readonly tools = new HandlerCatalog<RegisteredTool>(
    (tool) => tool.name,
    (name, first, second) => duplicateToolMessage(this.mount, name, first, second),
    () => (this.pages = []),
  );
  private readonly inFlight: InFlightRequests;
  private readonly invoker: ToolInvoker;
  private readonly methods = new Map<string, McpMethodHandler>();
  private readonly capabilities: Record<string, unknown> = { tools: { listChanged: true } };
  private pages: Readonly<Record<string, unknown>>[][] = [];
  private scopedTools = 0;
  private personalTools = 0;
  private taskTools = 0;
  private taskStarter?: McpTaskStarter;
  /** @internal The handlers `McpRegistry` switched off, for everyone or per principal (read by the features too). */
  readonly switches = new HandlerSwitches();

  /** @internal Built by the mount's module. */
  constructor(
    /** The mount this toolset serves. */
    readonly mount: string,
    private readonly identity: ToolsetIdentity,
    private readonly pageSize: number,
    rateLimits = new ToolRateLimits(new McpMemoryRateCounter(), `mcp:${mount}`, null),
  ) {
    this.logger = new Logger(`Toolset:${mount}`);
    this.inFlight = new InFlightRequests(mount);
    this.invoker = new ToolInvoker(
      this.logger,
      this.switches,
      this.inFlight,
      {
        declared: () => this.tasksDeclared,
        start: (...args) => (this.taskStarter as McpTaskStarter)(...args),
      },
      rateLimits,
    );
  }

  /** @internal Adds a tool; a second tool of the same name is a boot error naming both owners. */
  register(tool: RegisteredTool): void {
    this.tools.add(tool);
    if (tool.scopes?.length) this.scopedTools++;
    if (tool.scopes?.length || tool.roles?.length || tool.pipeline?.mayRefuse) this.personalTools++;
    if (allowsTasks(tool)) this.taskTools++;
  }

  /** @internal Removes a tool (`McpRegistry`); false when there was none of that name. */
  unregister(name: string): boolean {
    const tool = this.tools.remove(name);
    if (!tool) return false;
    if (tool.scopes?.length) this.scopedTools--;
    if (tool.scopes?.length || tool.roles?.length || tool.pipeline?.mayRefuse) this.personalTools--;
    if (allowsTasks(tool)) this.taskTools--;
    return true;
  }

  /** @internal True when some tool needs scopes: lists then depend on the caller. */
  get hasScopedTools(): boolean {
    return this.scopedTools > 0;
  }

  /** @internal Serves another request method (resources, prompts, completion...). */
  handle(method: string, handler: McpMethodHandler): void {
    this.methods.set(method, handler);
  }

  /** @internal Announces a server capability in `initialize` (and `server/discover`). */
  declareCapability(name: string, value: Record<string, unknown>): void {
    this.capabilities[name] = value;
  }

  /** The capabilities announced to clients (`tasks` while some tool may run as a task). */
  getCapabilities(): Record<string, unknown> {
    return this.tasksDeclared ? { ...this.capabilities, tasks: tasksServerCapability() } : { ...this.capabilities };
  }

  /** @internal Serves task-augmented `tools/call` requests (the mount's task service). */
  onTaskCall(starter: McpTaskStarter): void {
    this.taskStarter = starter;
  }

  /** @internal True when some tool may run as a task. */
  get hasTaskTools(): boolean {
    return this.taskTools > 0;
  }

  private get tasksDeclared(): boolean {
    return this.taskTools > 0 && this.taskStarter !== undefined;
  }

  /** Name, version, title and instructions announced to clients. */
  getIdentity(): ToolsetIdentity {
    return { ...this.identity };
  }

  /**
   * @internal
   * Runs `work` as the handling of `request`, with a context whose signal aborts on
   * `notifications/cancelled` for this request or when the caller's signal aborts.
   */
  async runCancellable<T>(
    request: JsonRpcRequest,
    context: McpDeliveryContext,
    work: (handlerContext: McpToolContext) => Promise<T>,
  ): Promise<T> {
    return this.inFlight.run(request, context, work);
  }

  /** @internal The registered tools, in registration order. */
  list(): RegisteredTool[] {
    return [...this.tools.values()];
  }

  /** @internal Looks up one tool by name. */
  get(name: string): RegisteredTool | undefined {
    return this.tools.get(name);
  }

  /**
   * Handles one JSON-RPC message as the mount's endpoint would, for the caller in `context`:
   * resolves to the response of a request, or null for a notification or a response.
   */
  async deliver(message: JsonRpcMessage, context: McpDeliveryContext): Promise<JsonRpcResponse | null> {
    if (!('method' in message)) return null; // a client's response to a request we never send yet
    if (!('id' in message) || message.id === undefined) {
      this.onNotification(message.method, message.params, context);
      return null;
    }
    try {
      const result = await this.handleRequest(message, context);
      const note = auditNoteOf(result);
      return note === null ? jsonRpcResult(message.id, result) : withAuditNote(jsonRpcResult(message.id, result), note);
    } catch (error) {
      if (error instanceof McpRefusedError)
        return withAuditNote(jsonRpcError(message.id, error.code, error.message, error.data), error.auditNote);
      if (error instanceof McpLimitExceededError)
        return withHttpStatus(
          withAuditNote(jsonRpcError(message.id, error.code, error.message, error.data), error.auditNote),
          429,
          error.retry ? retryAfterHeader(error.retry.retryAfterMs) : undefined,
        );
      if (error instanceof McpRpcError) return { jsonrpc: '2.0', id: message.id, error: error.toJsonRpc() };
      throw error;
    }
  }

  /** The result of a request (a value or a promise: `deliver` awaits either; a throw is its error). */
  private handleRequest(
    request: JsonRpcRequest,
    context: McpDeliveryContext,
  ): Record<string, unknown> | Promise<Record<string, unknown>> {
    switch (request.method) {
      case McpMethod.Initialize:
        return this.initializeResult(request.params);
      case McpMethod.Ping:
        return {};
      case McpMethod.ToolsList:
        return this.listPage(request.params?.cursor, context);
      case McpMethod.ToolsCall:
        return this.callTool(request, context);
      default: {
        const handler = this.methods.get(request.method);
        if (!handler) throw new McpRpcError(JsonRpcErrorCode.MethodNotFound, `Method not found: ${request.method}`);
        return handler(request, context);
      }
    }
  }

  private initializeResult(params: Record<string, unknown> | undefined): Record<string, unknown> {
    const { name, version, title, instructions } = this.identity;
    return {
      protocolVersion: negotiateProtocolVersion(params?.protocolVersion),
      capabilities: this.getCapabilities(),
      serverInfo: title ? { name, version, title } : { name, version },
      ...(instructions ? { instructions } : {}),
    };
  }

  /**
   * One page of the tools the caller may see. When every tool is visible to everyone the pages are
   * computed once; otherwise (scopes, roles or guards) per call, leaving out the tools the
   * principal lacks scopes or roles for or whose guards refuse it, and a stateless result is marked
   * `cacheScope: 'private'`, since another caller may see another list.
   */
  private async listPage(cursor: unknown, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    const scoped = this.personalTools > 0 || this.switches.active;
    if (!scoped && !this.pages.length) this.pages = this.paginate(this.list());
    const pages = scoped ? this.paginate(await this.visibleTools(context)) : this.pages;
    const index = cursor === undefined ? 0 : decodeCursor(cursor);
    if (index === null || index >= pages.length) {
      throw new McpRpcError(JsonRpcErrorCode.InvalidParams, 'Invalid params: unknown cursor');
    }
    const next = index + 1 < pages.length ? { nextCursor: encodeCursor(index + 1) } : {};
    const perCaller = scoped && !isSupportedSessionVersion(context.protocolVersion) ? { cacheScope: 'private' } : {};
    return { tools: pages[index], ...next, ...perCaller };
  }

  private async visibleTools(context: McpDeliveryContext): Promise<RegisteredTool[]> {
    const verdicts = await Promise.all(
      this.list().map(async (tool) => {
        if (
          missingScopes(tool.scopes ?? [], context.principal).length > 0 ||
          !hasSomeRole(tool.roles, context.principal)
        )
          return false;
        if (!this.switches.allows('tool', tool.name, context.principal)) return false;
        if (!tool.pipeline?.mayRefuse) return true;
        const info = executionInfoOf('list', McpMethod.ToolsList, 'tool', tool.name, context);
        return (await (await tool.pipeline.prepare(info)).authorize(info)).allowed;
      }),
    );
    return this.list().filter((_, index) => verdicts[index]);
  }

  private paginate(tools: RegisteredTool[]): Readonly<Record<string, unknown>>[][] {
    const all = tools.map((tool) => tool.definition);
    const pages: Readonly<Record<string, unknown>>[][] = [];
    for (let i = 0; i < all.length; i += this.pageSize) pages.push(all.slice(i, i + this.pageSize));
    return pages.length ? pages : [[]];
  }

  /** The dispatcher's part of `tools/call`: find the tool, and hand the call to the invoker. */
  private callTool(request: JsonRpcRequest, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    const name = request.params?.name;
    if (typeof name !== 'string') {
      throw new McpRpcError(
        JsonRpcErrorCode.InvalidParams,
        `Invalid params: ${McpMethod.ToolsCall} needs a string "name"`,
      );
    }
    const tool = this.tools.get(name);
    if (!tool) throw new McpRpcError(JsonRpcErrorCode.InvalidParams, `Unknown tool: ${name}`);
    return this.invoker.call(tool, request, context);
  }

  private onNotification(
    method: string,
    params: Record<string, unknown> | undefined,
    context: McpDeliveryContext,
  ): void {
    if (method !== McpMethod.Cancelled) return;
    const requestId = params?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const reason = typeof params?.reason === 'string' ? params.reason : 'Cancelled by the client';
    this.inFlight.cancel(context.sessionId, requestId, reason);
  }

  /** @internal How many requests run handlers now (for leak checks). */
  get inFlightCount(): number {
    return this.inFlight.size;
  }
}
