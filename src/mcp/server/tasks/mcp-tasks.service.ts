import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type BeforeApplicationShutdown,
} from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { captureTraceCarrier } from '../../telemetry/trace-carriers';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { checkInputResponse } from '../stateless/input-channel';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type {
  McpTaskPayload,
  McpTaskRecord,
  McpTaskStore,
} from '../../persistence/interfaces/mcp-task-store.interface';
import { InjectMcpTaskStore } from '../../persistence/mcp-persistence.constants';
import { storedPrincipalKey } from '../../persistence/new-records';
import { JsonRpcErrorCode, type JsonRpcRequest } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import {
  RELATED_TASK_META_KEY,
  declaresTasksExtension,
  isTerminalTaskStatus,
  tasksExtensionRequired,
} from '../../protocol/tasks';
import { StatelessErrorCode } from '../../protocol/stateless';
import type { McpResolvedOptions } from '../config/mcp.options';
import { McpMountBus, type McpTaskBusMessage } from '../pubsub/mount-bus';
import { decodeCursor, encodeCursor } from '../tools/list-cursor';
import type { RegisteredTool } from '../tools/registered-tool';
import { errorText } from '../tools/tool-result-mapper';
import { Toolset } from '../dispatch/toolset';
import { McpBullTaskQueue } from './bull-task.queue';
import { McpInlineTaskQueue } from './inline-task.queue';
import type { McpTaskQueue, McpTaskQueueStats } from './mcp-task.queue';
import { argumentsDigest, isTaskExpired, taskWireOf, toWireTask } from './task-wire';
import { McpLimitExceededError } from '../config/limit-exceeded.errors';
import { listedSessionOf, ownsTask, taskOwnerOf } from './task-owner';
import { McpRedisOutageLog } from '../../redis-outage-log';
import { McpTaskInputChannel, inputRequestsOf } from './task-input-channel';
import { McpTaskTransitions } from './task-transitions';
import { McpTaskWorker } from './task-worker';

/** The error `tasks/result` answers for a cancelled task. */
const CANCELLED_ERROR_CODE = JsonRpcErrorCode.InternalError;
/** The error `tasks/result` answers when the task is still running at its deadline (the SDK's request timeout code). */
const RESULT_TIMEOUT_CODE = -32001;
const NOT_FOUND = 'Failed to retrieve task: Task not found';

/**
 * The tasks of one mount (experimental tasks of 2025-11-25, and the tasks extension of
 * 2026-07-28): creates them for task-augmented `tools/call` requests and serves `tasks/get`,
 * `tasks/result`, `tasks/list`, `tasks/cancel` and `tasks/update` from the rows, so any replica
 * answers for any task. It owns the mount's task queue and its channel on the bus; the parts do
 * the rest: `McpTaskWorker` runs what the queue hands out, `McpTaskTransitions` moves a task
 * from state to state (conditional updates, audit, notifications), `McpTaskInputChannel`
 * carries a running handler's requests to the client and the answers back, and the revision's
 * `McpTaskWire` shapes what the client sees.
 */
@Injectable()
export class McpTaskService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger: Logger;
  private queue: McpTaskQueue = new McpInlineTaskQueue();
  private unsubscribe?: () => Promise<void>;
  private closing = false;
  private started = false;
  private starting?: Promise<void>;

  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly toolset: Toolset,
    @InjectMcpTaskStore() private readonly store: McpTaskStore,
    private readonly mountBus: McpMountBus,
    private readonly transitions: McpTaskTransitions,
    private readonly inputs: McpTaskInputChannel,
    private readonly worker: McpTaskWorker,
  ) {
    this.logger = new Logger(`McpTaskService:${options.mount}`);
  }

  /**
   * Once the tools are known: when some tool allows tasks, starts (see `start`). A mount without
   * such a tool opens no queue and answers `tasks/*` -32601 until `McpRegistry` adds one.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (this.toolset.hasTaskTools) await this.start();
  }

  /**
   * Serves the task methods, subscribes to the task channel, starts the workers and, without a
   * queue that redelivers, sweeps the rows a dead process left. Idempotent: at boot for the
   * decorated tools, or when `McpRegistry` adds the mount's first tool that allows tasks.
   */
  start(): Promise<void> {
    if (this.closing) return Promise.resolve();
    // A start that failed (Redis down) is tried again by the next caller.
    this.starting ??= this.open().catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  private async open(): Promise<void> {
    this.started = true;
    const tasks = this.options.tasks;
    // Made here rather than in the constructor: an app that fails to boot leaves no Redis connection open.
    if (tasks.redis)
      this.queue = new McpBullTaskQueue(
        tasks.queueName,
        tasks.redis,
        tasks.lockDurationMs,
        new McpRedisOutageLog(this.logger),
      );
    this.unsubscribe = await this.mountBus.subscribe('tasks', (message) => this.receive(message));
    await this.queue.start((id) => this.worker.run(id), this.options.tasks.concurrency);
    if (!this.queue.redelivers && this.options.tasks.concurrency > 0) await this.sweep();
    // Last: until the queue runs, a tool that allows tasks is called without one (runtime tools).
    this.toolset.onTaskCall((tool, request, context, answers) => this.create(tool, request, context, answers));
    this.toolset.handle(McpMethod.TasksGet, (request, context) => this.get(request, context));
    this.toolset.handle(McpMethod.TasksResult, (request, context) => this.result(request, context));
    this.toolset.handle(McpMethod.TasksList, (request, context) => this.list(request, context));
    this.toolset.handle(McpMethod.TasksCancel, (request, context) => this.cancel(request, context));
    this.toolset.handle(McpMethod.TasksUpdate, (request, context) => this.updateInputs(request, context));
  }

  /**
   * True once the mount started its tasks (at boot for a decorated tool that allows tasks, or
   * when `McpRegistry` added the first such tool), until the app shuts down: its task queue is
   * one the health checks look at.
   */
  get queueStarted(): boolean {
    return this.started && !this.closing;
  }

  /**
   * What the mount's task queue holds and who works on it (`McpHealthIndicator.tasks`). Rejects
   * when the queue cannot be read (Redis away) or the mount has not started its tasks.
   */
  async queueStats(): Promise<McpTaskQueueStats> {
    if (!this.queueStarted) throw new Error(`the task queue of mount "${this.options.mount}" is not running`);
    return this.queue.stats();
  }

  /** After the drain (which let running tasks finish until `shutdown.drainTimeoutMs`): aborts what still runs here (those tasks end interrupted) and closes the queue. */
  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    this.worker.stop();
    if (!this.started) return;
    await this.queue.close().catch((error) => this.logger.warn(`Could not close the task queue: ${errorText(error)}`));
    await this.unsubscribe?.().catch(() => undefined);
  }

  private async create(
    tool: RegisteredTool,
    request: JsonRpcRequest,
    context: McpDeliveryContext,
    answers?: Record<string, Record<string, unknown>>,
  ): Promise<Record<string, unknown>> {
    await this.checkTaskCap(context);
    const { ttl } = (request.params?.task ?? {}) as { ttl?: unknown };
    const { maxTtlMs, defaultTtlMs, pollIntervalMs } = this.options.tasks;
    const ttlMs =
      typeof ttl === 'number' && Number.isFinite(ttl) && ttl > 0 ? Math.min(Math.floor(ttl), maxTtlMs) : defaultTtlMs;
    const args = (request.params?.arguments ?? {}) as Record<string, unknown>;
    const meta = request.params?._meta as Record<string, unknown> | undefined;
    const payload: McpTaskPayload = {
      arguments: args,
      meta: meta ?? null,
      principal: storablePrincipal(context.principal),
      protocolVersion: context.protocolVersion,
      logLevel: context.logLevel ?? null,
      clientCapabilities: context.clientCapabilities ?? null,
      ...(answers && Object.keys(answers).length ? { answers } : {}),
    };
    const trace = captureTraceCarrier();
    if (trace) payload.trace = trace;
    const record = await this.store.create({
      id: randomBytes(24).toString('base64url'),
      principalKey: context.principal.key,
      sessionId: context.sessionId,
      toolName: tool.name,
      argumentsDigest: argumentsDigest(args),
      payload,
      statusMessage: null,
      ttlMs,
      pollIntervalMs,
    });
    await this.transitions.audit(record, 'created');
    await this.queue.enqueue(record.id);
    // The row is committed before the answer leaves: a tasks/get on any replica finds it.
    return taskWireOf(context.protocolVersion).created(record);
  }

  /**
   * `limits.tasksPerPrincipal`: the tasks of the caller's principal that are not over, counted in
   * the database so the cap holds across replicas (two calls racing at the cap may both pass).
   * Anonymous callers are counted together: a session or a task handle costs nothing to mint, so
   * a cap per binding would bound nothing, while one anonymous share leaves the queue to the
   * principals that hold a token.
   */
  private async checkTaskCap(context: McpDeliveryContext): Promise<void> {
    const max = this.options.limits.tasksPerPrincipal;
    if ((await this.store.countOpen(storedPrincipalKey(context.principal.key), new Date())) < max) return;
    throw new McpLimitExceededError(
      'tasksPerPrincipal',
      max,
      `Too many tasks: this principal already has ${max} tasks that are not over. Wait for one to finish, or cancel one with tasks/cancel`,
    );
  }

  /**
   * The ids among `ids` of tasks the principal owns and that have not expired, in the order
   * given: what a `subscriptions/listen` stream (2026-07-28, no session) may agree to hear
   * `notifications/tasks` about. An anonymous caller owns only the sessionless anonymous tasks
   * whose ids it names, never a session's (see `ownsTask`). One read for all the ids.
   */
  async ownedTaskIds(ids: readonly string[], principalKey: string): Promise<string[]> {
    const owner = taskOwnerOf(principalKey, null);
    const owned = new Set(
      (await this.store.getMany(ids, owner.principalKey))
        .filter((record) => ownsTask(owner, record) && !isTaskExpired(record))
        .map((record) => record.id),
    );
    return ids.filter((id) => owned.has(id));
  }

  private async owned(request: JsonRpcRequest, context: McpDeliveryContext): Promise<McpTaskRecord> {
    if (taskWireOf(context.protocolVersion).isExtension && !declaresTasksExtension(context.clientCapabilities)) {
      throw new McpRpcError(
        StatelessErrorCode.MissingRequiredClientCapability,
        `Missing required client capability: ${request.method} needs the tasks extension`,
        tasksExtensionRequired(),
      );
    }
    const id = request.params?.taskId;
    if (typeof id !== 'string')
      throw new McpRpcError(JsonRpcErrorCode.InvalidParams, 'Invalid params: "taskId" must be a string');
    const record = await this.store.get(id);
    // Another principal's task (or another anonymous caller's) and an expired one answer exactly like an unknown id.
    if (!record || !ownsTask(taskOwnerOf(context.principal.key, context.sessionId), record) || isTaskExpired(record)) {
      throw new McpRpcError(JsonRpcErrorCode.InvalidParams, NOT_FOUND);
    }
    return record;
  }

  private async get(request: JsonRpcRequest, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    const record = await this.owned(request, context);
    return taskWireOf(context.protocolVersion).status(record);
  }

  /**
   * `tasks/update` (2026-07-28): the answers to a task's `inputRequests`. Each answer under a key
   * the row holds as outstanding is checked against its method's result (-32602 when it cannot
   * be one) and handed to the waiting handler, on whichever worker runs it; answers under other
   * keys (unknown, already answered, or a task not in `input_required`) are ignored, as the
   * extension asks. The answer is the empty acknowledgment: the task is `working` again once
   * the handler has its last answer. An unknown task or malformed `inputResponses` is -32602.
   */
  private async updateInputs(request: JsonRpcRequest, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    if (!taskWireOf(context.protocolVersion).isExtension)
      throw new McpRpcError(JsonRpcErrorCode.MethodNotFound, `Method not found: ${request.method}`);
    const record = await this.owned(request, context);
    const responses = request.params?.inputResponses;
    if (!responses || typeof responses !== 'object' || Array.isArray(responses)) {
      throw new McpRpcError(JsonRpcErrorCode.InvalidParams, 'Invalid params: "inputResponses" must be an object');
    }
    const outstanding = inputRequestsOf(record);
    const answers = Object.entries(responses as Record<string, unknown>)
      .filter(([key]) => Object.prototype.hasOwnProperty.call(outstanding, key))
      .map(([key, answer]) => [key, checkInputResponse(key, outstanding[key].method, answer)] as const);
    for (const [key, result] of answers) await this.inputs.answer(record.id, key, { result });
    return {};
  }

  private async result(request: JsonRpcRequest, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    const deadline = Date.now() + this.options.tasks.resultTimeoutMs;
    let record = await this.owned(request, context);
    const forwarded = new Set<string>();
    while (!isTerminalTaskStatus(record.status)) {
      this.inputs.forward(record, context, forwarded);
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new McpRpcError(
          RESULT_TIMEOUT_CODE,
          `Task ${record.id} is still ${record.status} after ${this.options.tasks.resultTimeoutMs} ms: call tasks/result again`,
        );
      }
      await this.transitions.waitForChange(record.id, Math.min(left, record.pollIntervalMs), context.signal);
      if (context.signal?.aborted) throw context.signal.reason ?? new Error('The request was aborted');
      record = await this.owned(request, context);
    }
    const outcome = record.outcome ?? {};
    if ('error' in outcome) {
      const error = outcome.error as { code: number; message: string; data?: unknown };
      throw new McpRpcError(error.code, error.message, error.data);
    }
    const result = (outcome.result ?? {}) as Record<string, unknown>;
    return {
      ...result,
      _meta: {
        ...(result._meta as Record<string, unknown> | undefined),
        [RELATED_TASK_META_KEY]: { taskId: record.id },
      },
    };
  }

  private async list(request: JsonRpcRequest, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    const cursor = request.params?.cursor;
    const page = cursor === undefined ? 0 : decodeCursor(cursor);
    if (page === null) throw new McpRpcError(JsonRpcErrorCode.InvalidParams, 'Invalid params: unknown cursor');
    const size = this.options.pageSize;
    const owner = taskOwnerOf(context.principal.key, context.sessionId);
    const session = listedSessionOf(owner);
    // An anonymous caller without a session has no tasks anyone may list: its task ids are its handles.
    const rows =
      session === null ? [] : await this.store.list(owner.principalKey, new Date(), page * size, size + 1, session);
    if (page > 0 && rows.length === 0)
      throw new McpRpcError(JsonRpcErrorCode.InvalidParams, 'Invalid params: unknown cursor');
    // Checked again here, so a store that ignored the session never lists another caller's task.
    const shown = rows.slice(0, size).filter((record) => ownsTask(owner, record));
    return { tasks: shown.map(toWireTask), ...(rows.length > size ? { nextCursor: encodeCursor(page + 1) } : {}) };
  }

  private async cancel(request: JsonRpcRequest, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    const record = await this.owned(request, context);
    const wire = taskWireOf(context.protocolVersion);
    // 2026-07-28: an empty acknowledgment, also for a task that is already over (cancellation is cooperative).
    if (wire.acknowledgesCancel) {
      if (!isTerminalTaskStatus(record.status)) await this.cancelRunning(record);
      return {};
    }
    const refuse = (status: string) =>
      new McpRpcError(JsonRpcErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${status}'`);
    if (isTerminalTaskStatus(record.status)) throw refuse(record.status);
    const cancelled = await this.transitions.finish(record, 'cancelled', 'The task was cancelled by request', {
      error: { code: CANCELLED_ERROR_CODE, message: `Task ${record.id} was cancelled` },
    });
    if (!cancelled) throw refuse((await this.store.get(record.id))?.status ?? 'cancelled');
    await this.abort(record.id);
    return wire.status(cancelled);
  }

  private async cancelRunning(record: McpTaskRecord): Promise<void> {
    const cancelled = await this.transitions.finish(record, 'cancelled', 'The task was cancelled by request', {
      error: { code: CANCELLED_ERROR_CODE, message: `Task ${record.id} was cancelled` },
    });
    if (!cancelled) return;
    await this.abort(record.id);
  }

  /** Stops a cancelled task's handler, wherever it runs. */
  private async abort(id: string): Promise<void> {
    this.worker.abort(id);
    if (this.mountBus.distributed) await this.mountBus.publish('tasks', { t: 'c', id });
  }

  /**
   * Queues the unfinished tasks a dead process of this mount left: one it never claimed runs
   * now; one it claimed ends interrupted (or runs again, idempotent tools), as the worker decides.
   */
  private async sweep(): Promise<void> {
    for (const record of await this.store.unfinished()) {
      if (record.worker !== this.worker.id && !isTaskExpired(record)) await this.queue.enqueue(record.id);
    }
  }

  /** A message of the mount's `tasks` channel, from another replica. */
  private receive(message: McpTaskBusMessage): void {
    if (message.t === 'i') {
      const { t: _t, id, key, ...answer } = message;
      this.inputs.settleHere(id, key, answer);
      return;
    }
    if (message.t === 'c') this.worker.abort(message.id);
    this.transitions.changedElsewhere(message.id);
  }
}

/** The principal as a row can hold it: `raw` only when it is plain JSON. */
function storablePrincipal(principal: McpPrincipal): McpTaskPayload['principal'] {
  let raw: unknown;
  try {
    raw = JSON.parse(JSON.stringify(principal.raw ?? null));
  } catch {
    raw = null;
  }
  return {
    key: principal.key,
    label: principal.label,
    ...(principal.scopes ? { scopes: [...principal.scopes] } : {}),
    ...(principal.roles ? { roles: [...principal.roles] } : {}),
    raw,
  };
}
