import { HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { McpDeliveryContext, McpMessageHandler } from '../../interfaces/mcp-delivery.interface';
import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import { McpInfrastructureError } from '../../errors/mcp-infrastructure.errors';
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
import { decodeCursor, encodeCursor } from '../tools/list-cursor';
import type { RegisteredTool } from '../tools/registered-tool';
import { HandlerCatalog } from '../pipeline/handler-catalog';
import { errorResult, errorText, toCallToolResult } from '../tools/tool-result-mapper';
import { createHandlerContext } from '../pipeline/handler-context.factory';
import { missingScopes } from '../pipeline/missing-scopes';
import { TRANSPORT_ERROR_CODE } from '../responses/mcp-http-responses';
import type { McpExecutionInfo } from '../pipeline/mcp-execution-context';
import { auditNoteOf, hasSomeRole, McpRefusedError, refusalNote, withAuditNote } from '../pipeline/handler-refusal';
import { McpLimitExceededError, withHttpStatus } from '../config/limit-exceeded.errors';
import { HandlerSwitches } from '../pipeline/handler-switches';
import { declaresTasksExtension, tasksExtensionRequired, tasksServerCapability } from '../../protocol/tasks';
import { StatelessErrorCode, isStatelessVersion } from '../../protocol/stateless';
import { withInternalSpan } from '../../telemetry/mcp-spans';
import { McpAttr, TOOL_ERROR_TYPE } from '../../telemetry/mcp-telemetry.constants';

/**
 * Starts a task-augmented `tools/call` of `tool`: resolves to its `CreateTaskResult`. `answers`
 * are the client's answers of the rounds the handler ran before the task (`inputBeforeTask`).
 */
type McpTaskStarter = (
  tool: RegisteredTool,
  request: JsonRpcRequest,
  context: McpDeliveryContext,
  answers?: Record<string, Record<string, unknown>>,
) => Promise<Record<string, unknown>>;

/**
 * Thrown by `ctx.startTask()` in a handler that runs before its task exists (`inputBeforeTask`):
 * it escapes the tool's `isError` mapping, and the toolset creates the task.
 */
class TaskStartSignal extends Error {
  constructor() {
    super('The handler asked to continue as a task');
    this.name = 'TaskStartSignal';
  }
}

/** True when `tool` may run as a task. */
function allowsTasks(tool: RegisteredTool): boolean {
  return tool.taskSupport === 'optional' || tool.taskSupport === 'required';
}

/**
 * Runs a tool's handler inside an INTERNAL `execute_tool {name}` span, a child of the exchange's
 * span: calls the handler makes (an `McpClientService` call) continue the trace. An `isError`
 * result marks the span failed (`error.type` `tool_error`).
 */
function handlerSpan(name: string, work: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  return withInternalSpan(
    `execute_tool ${name}`,
    { [McpAttr.OperationName]: 'execute_tool', [McpAttr.ToolName]: name },
    work,
    (result) => (result.isError === true ? TOOL_ERROR_TYPE : null),
  );
}

/** The statuses of an `HttpException` thrown by a guard that mean "not for you" (the tool is then unknown to the caller). */
const REFUSAL_STATUSES = new Set<number>([HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN]);

/** An error class, abstract or not, whatever its constructor takes. */
type ErrorClass = abstract new (...args: never[]) => Error;

const propagatedErrors = new Set<ErrorClass>([McpRpcError, McpInfrastructureError, TaskStartSignal]);

/**
 * Marks an error class as one a handler failure must not swallow into an `isError` result: it
 * propagates to the carrier (a JSON-RPC error, an HTTP 5xx, an `input_required` round trip).
 */
export function propagateFromHandlers(errorClass: ErrorClass): void {
  propagatedErrors.add(errorClass);
}

/** True when `error` is of a class handler failures must propagate (see `propagateFromHandlers`). */
export function isPropagated(error: unknown): boolean {
  for (const errorClass of propagatedErrors) if (error instanceof errorClass) return true;
  return false;
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
  private readonly inFlight = new Map<string, AbortController>();
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
  ) {
    this.logger = new Logger(`Toolset:${mount}`);
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
    const key = this.inFlightKey(context.sessionId, request.id);
    const controller = new AbortController();
    const onOuterAbort = () => controller.abort(context.signal?.reason);
    context.signal?.addEventListener('abort', onOuterAbort, { once: true });
    this.inFlight.set(key, controller);
    const handlerContext = createHandlerContext(this.mount, request, context, controller.signal);
    try {
      return await work(handlerContext);
    } finally {
      handlerContext.end();
      // Two requests may share a key (same id on two stateless callers): remove only our own entry.
      if (this.inFlight.get(key) === controller) this.inFlight.delete(key);
      context.signal?.removeEventListener('abort', onOuterAbort);
    }
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
        );
      if (error instanceof McpRpcError) return { jsonrpc: '2.0', id: message.id, error: error.toJsonRpc() };
      throw error;
    }
  }

  private async handleRequest(request: JsonRpcRequest, context: McpDeliveryContext): Promise<Record<string, unknown>> {
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
        const info = this.executionInfo(McpMethod.ToolsList, tool.name, context, 'list');
        return (await (await tool.pipeline.prepare(info)).authorize(info)).allowed;
      }),
    );
    return this.list().filter((_, index) => verdicts[index]);
  }

  private executionInfo(
    method: string,
    name: string,
    context: McpDeliveryContext,
    phase: McpExecutionInfo['phase'],
  ): McpExecutionInfo {
    return {
      phase,
      method,
      kind: 'tool',
      name,
      principal: context.principal,
      sessionId: context.sessionId,
      protocolVersion: context.protocolVersion,
    };
  }

  private paginate(tools: RegisteredTool[]): Readonly<Record<string, unknown>>[][] {
    const all = tools.map((tool) => tool.definition);
    const pages: Readonly<Record<string, unknown>>[][] = [];
    for (let i = 0; i < all.length; i += this.pageSize) pages.push(all.slice(i, i + this.pageSize));
    return pages.length ? pages : [[]];
  }

  private async callTool(request: JsonRpcRequest, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    const name = request.params?.name;
    if (typeof name !== 'string') {
      throw new McpRpcError(
        JsonRpcErrorCode.InvalidParams,
        `Invalid params: ${McpMethod.ToolsCall} needs a string "name"`,
      );
    }
    const tool = this.tools.get(name);
    if (!tool) throw new McpRpcError(JsonRpcErrorCode.InvalidParams, `Unknown tool: ${name}`);
    // Over HTTP the bearer guard answers 403 before this; in process this is the check.
    const scopes = tool.scopes ?? [];
    if (missingScopes(scopes, context.principal).length > 0) {
      throw new McpRpcError(
        TRANSPORT_ERROR_CODE,
        `Insufficient scope: tool "${name}" needs the scopes ${scopes.join(' ')}`,
      );
    }

    if (!hasSomeRole(tool.roles, context.principal)) {
      throw new McpRefusedError(
        JsonRpcErrorCode.InvalidParams,
        `Unknown tool: ${name}`,
        refusalNote(`tool "${name}"`, `roles (needs one of ${tool.roles?.join(' ')})`),
      );
    }
    if (!this.switches.allows('tool', name, context.principal)) {
      throw new McpRefusedError(
        JsonRpcErrorCode.InvalidParams,
        `Unknown tool: ${name}`,
        refusalNote(`tool "${name}"`, 'McpRegistry', new Error('disabled')),
      );
    }
    const taskSupport = tool.taskSupport ?? 'forbidden';
    // Without the capability the task field is ignored, as the specification asks.
    if (
      request.params?.task !== undefined &&
      this.tasksDeclared &&
      isSupportedSessionVersion(context.protocolVersion)
    ) {
      if (taskSupport === 'forbidden')
        throw new McpRpcError(JsonRpcErrorCode.MethodNotFound, `Tool "${name}" cannot be called as a task`);
      return (this.taskStarter as McpTaskStarter)(tool, request, context);
    }
    // 2026-07-28: the server decides. A tool that allows tasks runs as one for a client that
    // declared the tasks extension on this request; a required one refuses any other client.
    if (
      !context.task &&
      taskSupport !== 'forbidden' &&
      this.tasksDeclared &&
      isStatelessVersion(context.protocolVersion)
    ) {
      if (declaresTasksExtension(context.clientCapabilities)) {
        return tool.inputBeforeTask
          ? this.callBeforeTask(tool, request, context)
          : (this.taskStarter as McpTaskStarter)(tool, request, context);
      }
      if (taskSupport === 'required') {
        throw new McpRpcError(
          StatelessErrorCode.MissingRequiredClientCapability,
          `Missing required client capability: tool "${name}" runs only as a task`,
          tasksExtensionRequired(),
        );
      }
    }
    if (taskSupport === 'required' && !context.task)
      throw new McpRpcError(JsonRpcErrorCode.MethodNotFound, `Tool "${name}" must be called as a task (params.task)`);
    return this.callHere(tool, request, context);
  }

  /**
   * A tool with `inputBeforeTask`, called by a client that declared the tasks extension: the
   * handler runs with the call (its input requests are this call's `input_required` rounds)
   * until `ctx.startTask()`, which creates the task with the answers it was given so far. A
   * handler that returns without calling it answers the call itself.
   */
  private async callBeforeTask(
    tool: RegisteredTool,
    request: JsonRpcRequest,
    context: McpDeliveryContext,
  ): Promise<Record<string, unknown>> {
    const beginTask = (): never => {
      throw new TaskStartSignal();
    };
    try {
      return await this.callHere(tool, request, { ...context, beginTask });
    } catch (error) {
      if (!(error instanceof TaskStartSignal)) throw error;
      return (this.taskStarter as McpTaskStarter)(tool, request, context, context.client?.consumedAnswers?.() ?? {});
    }
  }

  /** Runs the tool's handler for this call (through its pipeline when it has one). */
  private async callHere(
    tool: RegisteredTool,
    request: JsonRpcRequest,
    context: McpDeliveryContext,
  ): Promise<Record<string, unknown>> {
    const name = tool.name;
    if (tool.pipeline) return this.callThroughPipeline(tool, request, context);

    const input = await tool.validateInput(request.params?.arguments ?? {});
    if (!input.ok) return errorResult(`Invalid arguments for tool "${name}": ${input.message}`);

    return this.runCancellable(request, context, async (toolContext) => {
      try {
        return await handlerSpan(tool.name, async () =>
          toCallToolResult(tool, await tool.invoke(input.value, toolContext)),
        );
      } catch (error) {
        return this.failedCall(tool, error);
      }
    });
  }

  /**
   * A call of a tool with Nest enhancers: guards first (with the raw arguments; a refusal answers
   * as for an unknown tool and names the guard in the audit trail, a guard's `McpRpcError`
   * propagates), then argument validation, then interceptors, pipes, the method and filters.
   */
  private callThroughPipeline(
    tool: RegisteredTool,
    request: JsonRpcRequest,
    context: McpDeliveryContext,
  ): Promise<Record<string, unknown>> {
    const pipeline = tool.pipeline as NonNullable<RegisteredTool['pipeline']>;
    return this.runCancellable(request, context, async (toolContext) => {
      const info: McpExecutionInfo = {
        ...this.executionInfo(McpMethod.ToolsCall, tool.name, context, 'call'),
        arguments: request.params?.arguments ?? {},
        handlerContext: toolContext,
      };
      const prepared = await pipeline.prepare(toolContext);
      const verdict = await prepared.authorize(info);
      if (!verdict.allowed) {
        if (verdict.error instanceof McpRpcError) throw verdict.error;
        const note = refusalNote(`tool "${tool.name}"`, verdict.guard, verdict.error);
        // A guard that answers something else than 401/403 (429 from a throttler...) is heard.
        if (verdict.error instanceof HttpException && !REFUSAL_STATUSES.has(verdict.error.getStatus()))
          return withAuditNote(errorResult(errorText(verdict.error)), note);
        throw new McpRefusedError(JsonRpcErrorCode.InvalidParams, `Unknown tool: ${tool.name}`, note);
      }
      const input = await tool.validateInput(info.arguments);
      if (!input.ok) return errorResult(`Invalid arguments for tool "${tool.name}": ${input.message}`);
      info.arguments = input.value;
      try {
        return await handlerSpan(tool.name, async () =>
          toCallToolResult(tool, await prepared.run(input.value, toolContext, info)),
        );
      } catch (error) {
        return this.failedCall(tool, error);
      }
    });
  }

  private failedCall(tool: RegisteredTool, error: unknown): Record<string, unknown> {
    if (isPropagated(error)) throw error;
    this.logger.debug(`Tool "${tool.name}" (${tool.owner}) failed: ${errorText(error)}`);
    return errorResult(errorText(error));
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
    this.inFlight.get(this.inFlightKey(context.sessionId, requestId))?.abort(new Error(reason));
  }

  /** @internal How many requests run handlers now (for leak checks). */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  private inFlightKey(sessionId: string | null, requestId: string | number): string {
    return `${sessionId ?? ''}\u0000${typeof requestId}:${requestId}`;
  }
}
