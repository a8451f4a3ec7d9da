import { context as otelContext, ROOT_CONTEXT } from '@opentelemetry/api';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpTaskRecord, McpTaskStore } from '../../persistence/interfaces/mcp-task-store.interface';
import { InjectMcpTaskStore } from '../../persistence/mcp-persistence.constants';
import { JsonRpcErrorCode, type JsonRpcRequest } from '../../protocol/jsonrpc';
import type { McpLogLevel } from '../../protocol/log-levels';
import { McpMethod } from '../../protocol/mcp-methods';
import { isTerminalTaskStatus } from '../../protocol/tasks';
import { withInternalSpan } from '../../telemetry/mcp-spans';
import { McpAttr } from '../../telemetry/mcp-telemetry.constants';
import { restoreTraceCarrier } from '../../telemetry/trace-carriers';
import type { McpResolvedOptions } from '../config/mcp.options';
import { Toolset } from '../dispatch/toolset';
import { McpSessionBus } from '../sessions/mcp-session-bus';
import { McpDrainService } from '../shutdown/mcp-drain.service';
import type { RegisteredTool } from '../tools/registered-tool';
import { errorText } from '../tools/tool-result-mapper';
import { McpTaskInputChannel } from './task-input-channel';
import { McpTaskTransitions } from './task-transitions';
import { isTaskExpired, taskWireOf } from './task-wire';

/**
 * Runs the tasks the mount's queue hands to this process: claims each with one conditional
 * UPDATE (a task runs at most once, unless its worker died and the tool is idempotent), calls its
 * tool through the toolset as the task's owner, in the trace of the exchange that created it, and
 * ends it with the outcome. A running task holds the drain like a request.
 */
@Injectable()
export class McpTaskWorker {
  /** This process's name on the rows it claims. */
  readonly id = `${process.pid}-${randomBytes(9).toString('base64url')}`;
  private readonly logger: Logger;
  private readonly running = new Map<string, AbortController>();
  private stopping = false;

  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly toolset: Toolset,
    @InjectMcpTaskStore() private readonly store: McpTaskStore,
    private readonly transitions: McpTaskTransitions,
    private readonly inputs: McpTaskInputChannel,
    private readonly bus: McpSessionBus,
    private readonly drain: McpDrainService,
  ) {
    this.logger = new Logger(`McpTaskWorker:${options.mount}`);
  }

  /** Runs one task on this worker: claim, handler, outcome. */
  async run(id: string): Promise<void> {
    const record = await this.store.get(id);
    if (!record || isTerminalTaskStatus(record.status) || isTaskExpired(record)) return;
    const tool = this.toolset.get(record.toolName);
    if (await this.store.claim(id, this.id, null))
      return this.execute({ ...record, worker: this.id, attempt: record.attempt + 1 }, tool);
    // Claimed before: its worker died (the queue handed the job on) or the process restarted.
    const current = await this.store.get(id);
    if (!current || isTerminalTaskStatus(current.status) || current.worker === this.id) return;
    if (tool?.idempotent && (await this.store.claim(id, this.id, current.worker))) {
      const mine = { ...current, worker: this.id, attempt: current.attempt + 1 };
      await this.transitions.audit(mine, 'rerun', `worker ${current.worker} stopped; the tool is idempotent`);
      return this.execute(mine, tool);
    }
    await this.transitions.finish(
      current,
      'failed',
      'Interrupted: the worker running the task stopped before it finished',
      {
        error: {
          code: JsonRpcErrorCode.InternalError,
          message: 'The task was interrupted: the worker running it stopped before it finished',
        },
      },
    );
  }

  /** Aborts the handler of a task if it runs here (the task was cancelled). */
  abort(id: string): void {
    this.running.get(id)?.abort(new Error('The task was cancelled'));
  }

  /** At shutdown, after the drain: aborts every handler still running here (those tasks end interrupted). */
  stop(): void {
    this.stopping = true;
    for (const controller of this.running.values()) controller.abort(new Error('The worker is shutting down'));
  }

  private async execute(record: McpTaskRecord, tool: RegisteredTool | undefined): Promise<void> {
    if (!tool) {
      await this.transitions.finish(record, 'failed', `Unknown tool: ${record.toolName}`, {
        error: { code: JsonRpcErrorCode.InvalidParams, message: `Unknown tool: ${record.toolName}` },
      });
      return;
    }
    const controller = new AbortController();
    this.running.set(record.id, controller);
    // A running task holds the drain like a request: it may finish until shutdown.drainTimeoutMs, then it is aborted.
    const inFlight = this.drain.enter(this.options.mount);
    const onDrainDeadline = () => controller.abort(inFlight.signal.reason);
    inFlight.signal.addEventListener('abort', onDrainDeadline, { once: true });
    await this.transitions.audit(record, 'started');
    try {
      const outcome = await this.invoke(record, controller.signal);
      if (controller.signal.aborted && (this.stopping || inFlight.signal.aborted)) {
        await this.transitions.finish(record, 'failed', 'Interrupted: the worker shut down', {
          error: { code: JsonRpcErrorCode.InternalError, message: 'The task was interrupted: the worker shut down' },
        });
      } else if ('error' in outcome) {
        await this.transitions.finish(
          record,
          'failed',
          // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a tool's error message may be any value; the status message is its text
          String((outcome.error as { message?: unknown }).message ?? 'The tool call failed'),
          outcome,
        );
      } else {
        const result = outcome.result as Record<string, unknown>;
        const failed = result.isError === true && taskWireOf(record.payload.protocolVersion).failsOnToolError;
        await this.transitions.finish(
          record,
          failed ? 'failed' : 'completed',
          result.isError === true ? failureText(result) : undefined,
          outcome,
        );
      }
    } finally {
      this.running.delete(record.id);
      inFlight.signal.removeEventListener('abort', onDrainDeadline);
      inFlight.leave();
    }
  }

  /** Calls the tool through the toolset as the task's owner; resolves to `{ result }` or `{ error }`. */
  private async invoke(record: McpTaskRecord, signal: AbortSignal): Promise<Record<string, unknown>> {
    const { payload } = record;
    const request: JsonRpcRequest = {
      jsonrpc: '2.0',
      id: `task:${record.id}`,
      method: McpMethod.ToolsCall,
      params: { name: record.toolName, arguments: payload.arguments, ...(payload.meta ? { _meta: payload.meta } : {}) },
    };
    const sessionId = record.sessionId;
    const context: McpDeliveryContext = {
      principal: payload.principal,
      sessionId,
      protocolVersion: payload.protocolVersion,
      signal,
      logLevel: (payload.logLevel ?? null) as McpLogLevel | null,
      notify: sessionId ? (notification) => this.bus.notifySession(sessionId, notification) : undefined,
      task: { id: record.id, update: (message) => this.transitions.setMessage(record.id, message) },
      clientCapabilities: payload.clientCapabilities ?? null,
      client: this.inputs.clientOf(record, signal),
    };
    try {
      // The run continues the trace of the exchange that created the task, on whichever replica runs it.
      const run = () =>
        withInternalSpan('mcp.task.run', { [McpAttr.ToolName]: record.toolName, [McpAttr.Mount]: record.mount }, () =>
          this.toolset.deliver(request, context),
        );
      const response = await otelContext.with(restoreTraceCarrier(payload.trace, ROOT_CONTEXT), run);
      if (!response)
        return { error: { code: JsonRpcErrorCode.InternalError, message: 'The tool call gave no response' } };
      return 'error' in response ? { error: response.error } : { result: response.result };
    } catch (error) {
      this.logger.warn(`Task ${record.id} (${record.toolName}) failed: ${errorText(error)}`);
      return { error: { code: JsonRpcErrorCode.InternalError, message: `Internal error: ${errorText(error)}` } };
    }
  }
}

/** The text of an `isError` result, for the status message. */
function failureText(result: Record<string, unknown>): string {
  const first = (result.content as { type?: string; text?: string }[] | undefined)?.find(
    (block) => block.type === 'text',
  );
  return first?.text ?? 'The tool reported an error';
}
