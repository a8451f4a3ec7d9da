import { HttpException, HttpStatus, type Logger } from '@nestjs/common';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpToolContext } from '../../interfaces/mcp-tool-context.interface';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { JsonRpcErrorCode, type JsonRpcRequest } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import { isSupportedSessionVersion } from '../../protocol/revisions';
import { StatelessErrorCode, isStatelessVersion } from '../../protocol/stateless';
import { declaresTasksExtension, tasksExtensionRequired } from '../../protocol/tasks';
import { mcpTelemetryActive, withInternalSpan } from '../../telemetry/mcp-spans';
import { McpAttr, TOOL_ERROR_TYPE } from '../../telemetry/mcp-telemetry.constants';
import { hasSomeRole, McpRefusedError, refusalNote, withAuditNote } from '../pipeline/handler-refusal';
import { deliveryWith } from '../pipeline/lazy-abort';
import type { HandlerSwitches } from '../pipeline/handler-switches';
import { executionInfoOf, type McpExecutionInfo } from '../pipeline/mcp-execution-context';
import { missingScopes } from '../pipeline/missing-scopes';
import { TRANSPORT_ERROR_CODE } from '../responses/mcp-http-responses';
import type { ToolRateLimits } from '../ratelimit/tool-rate-limits';
import type { ValidationOutcome } from '../tools/json-schema-validator';
import type { RegisteredTool } from '../tools/registered-tool';
import { errorResult, errorText, toCallToolResult } from '../tools/tool-result-mapper';
import { isPropagated, TaskStartSignal } from './handler-errors';
import type { InFlightRequests } from './in-flight-requests';

/**
 * Starts a task-augmented `tools/call` of `tool`: resolves to its `CreateTaskResult`. `answers`
 * are the client's answers of the rounds the handler ran before the task (`inputBeforeTask`).
 */
export type McpTaskStarter = (
  tool: RegisteredTool,
  request: JsonRpcRequest,
  context: McpDeliveryContext,
  answers?: Record<string, Record<string, unknown>>,
) => Promise<Record<string, unknown>>;

/** Where the invoker finds the mount's tasks: whether they are on, and how to start one. */
export interface ToolInvokerTasks {
  /** True when the mount announces tasks (some tool allows them and the task service runs). */
  declared(): boolean;
  /** Starts a task; only called while `declared`. */
  readonly start: McpTaskStarter;
}

/** The statuses of an `HttpException` thrown by a guard that mean "not for you" (the tool is then unknown to the caller). */
const REFUSAL_STATUSES = new Set<number>([HttpStatus.UNAUTHORIZED, HttpStatus.FORBIDDEN]);

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

/**
 * Runs one `tools/call` of a known tool, once the dispatcher found it: the caller's scopes,
 * roles and the registry's switches first, then the budgets of calls (`rateLimit`), then where the call runs (a task of either revision,
 * or here), then the handler (through its Nest enhancers when it has any) with validated
 * arguments. A handler's failure becomes an `isError` result, except the errors that must
 * propagate (`isPropagated`).
 */
export class ToolInvoker {
  constructor(
    private readonly logger: Logger,
    private readonly switches: HandlerSwitches,
    private readonly inFlight: InFlightRequests,
    private readonly tasks: ToolInvokerTasks,
    private readonly rateLimits: ToolRateLimits,
  ) {}

  /** Checks and runs the call of `tool`; resolves to the `tools/call` result. */
  async call(
    tool: RegisteredTool,
    request: JsonRpcRequest,
    context: McpDeliveryContext,
  ): Promise<Record<string, unknown>> {
    const name = tool.name;
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
    // The budgets count a call the caller may make, once: a task's run on a worker was counted
    // when the task was created. A spent budget answers 429 before anything runs.
    if (!context.task && this.rateLimits.apply(tool)) await this.rateLimits.count(tool, context.principal);
    const taskSupport = tool.taskSupport ?? 'forbidden';
    // Without the capability the task field is ignored, as the specification asks.
    if (
      request.params?.task !== undefined &&
      this.tasks.declared() &&
      isSupportedSessionVersion(context.protocolVersion)
    ) {
      if (taskSupport === 'forbidden')
        throw new McpRpcError(JsonRpcErrorCode.MethodNotFound, `Tool "${name}" cannot be called as a task`);
      return this.tasks.start(tool, request, context);
    }
    // 2026-07-28: the server decides. A tool that allows tasks runs as one for a client that
    // declared the tasks extension on this request; a required one refuses any other client.
    if (
      !context.task &&
      taskSupport !== 'forbidden' &&
      this.tasks.declared() &&
      isStatelessVersion(context.protocolVersion)
    ) {
      if (declaresTasksExtension(context.clientCapabilities)) {
        return tool.inputBeforeTask
          ? this.callBeforeTask(tool, request, context)
          : this.tasks.start(tool, request, context);
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
    return await this.callHere(tool, request, context);
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
      return await this.callHere(tool, request, deliveryWith(context, { beginTask }));
    } catch (error) {
      if (!(error instanceof TaskStartSignal)) throw error;
      return this.tasks.start(tool, request, context, context.client?.consumedAnswers?.() ?? {});
    }
  }

  /** Runs the tool's handler for this call (through its pipeline when it has one). */
  private callHere(
    tool: RegisteredTool,
    request: JsonRpcRequest,
    context: McpDeliveryContext,
  ): Promise<Record<string, unknown>> {
    if (tool.pipeline) return this.callThroughPipeline(tool, request, context);
    const input = tool.validateInput(request.params?.arguments ?? {});
    // Most validators answer at once: no await between the arguments and the handler then.
    if (input instanceof Promise) return input.then((checked) => this.callValidated(tool, request, context, checked));
    return this.callValidated(tool, request, context, input);
  }

  /** The handler of a tool without enhancers, once its arguments were validated. */
  private callValidated(
    tool: RegisteredTool,
    request: JsonRpcRequest,
    context: McpDeliveryContext,
    input: ValidationOutcome,
  ): Promise<Record<string, unknown>> {
    if (!input.ok) return Promise.resolve(errorResult(`Invalid arguments for tool "${tool.name}": ${input.message}`));
    const value = input.value;
    return this.inFlight.run(request, context, (toolContext) => this.invokeHere(tool, value, toolContext));
  }

  /** The handler of a tool without enhancers, with validated arguments (in its span when telemetry records). */
  private async invokeHere(
    tool: RegisteredTool,
    input: unknown,
    toolContext: McpToolContext,
  ): Promise<Record<string, unknown>> {
    try {
      // No SDK records: no span name, attributes or closure for the call.
      if (!mcpTelemetryActive()) return toCallToolResult(tool, await tool.invoke(input, toolContext));
      return await handlerSpan(tool.name, async () => toCallToolResult(tool, await tool.invoke(input, toolContext)));
    } catch (error) {
      return this.failedCall(tool, error);
    }
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
    return this.inFlight.run(request, context, async (toolContext) => {
      const info: McpExecutionInfo = {
        ...executionInfoOf('call', McpMethod.ToolsCall, 'tool', tool.name, context),
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
}
