import { context as otelContext, ROOT_CONTEXT } from '@opentelemetry/api';
import { withInternalSpan } from '../../telemetry/mcp-spans';
import { McpAttr } from '../../telemetry/mcp-telemetry.constants';
import { captureTraceCarrier, restoreTraceCarrier } from '../../telemetry/trace-carriers';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type BeforeApplicationShutdown,
} from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpPrincipal } from '../../interfaces/principal.interface';
import { McpRpcError } from '../../errors/mcp-rpc.errors';
import { McpClientRequestError, McpClientRequestTimeoutError } from '../../errors/mcp-client-request.errors';
import type { McpInputRequestOptions } from '../../interfaces/mcp-tool-context.interface';
import { CLIENT_CAPABILITY_OF_REQUEST } from '../../protocol/method-catalog';
import { checkInputResponse } from '../stateless/input-channel';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpEventSink } from '../../persistence/interfaces/mcp-event-sink.interface';
import type {
  McpTaskPayload,
  McpTaskRecord,
  McpTaskStore,
} from '../../persistence/interfaces/mcp-task-store.interface';
import { InjectMcpEventSink, InjectMcpTaskStore } from '../../persistence/mcp-persistence.constants';
import { storedPrincipalKey } from '../../persistence/new-records';
import { JsonRpcErrorCode, type JsonRpcRequest } from '../../protocol/jsonrpc';
import { McpMethod } from '../../protocol/mcp-methods';
import {
  RELATED_TASK_META_KEY,
  TASK_RESULT_TYPE,
  declaresTasksExtension,
  isTerminalTaskStatus,
  tasksExtensionRequired,
} from '../../protocol/tasks';
import { StatelessErrorCode, isStatelessVersion } from '../../protocol/stateless';
import { McpListenStreams } from '../stateless/listen-stream-registry';
import type { McpLogLevel } from '../../protocol/log-levels';
import type { McpResolvedOptions } from '../config/mcp.options';
import { McpMountBus, type McpTaskBusMessage, type McpTaskInputAnswer } from '../pubsub/mount-bus';
import { McpSessionBus } from '../sessions/mcp-session-bus';
import { decodeCursor, encodeCursor } from '../tools/list-cursor';
import type { RegisteredTool } from '../tools/registered-tool';
import { errorText } from '../tools/tool-result-mapper';
import { Toolset } from '../dispatch/toolset';
import { McpBullTaskQueue } from './bull-task.queue';
import { McpInlineTaskQueue } from './inline-task.queue';
import type { McpTaskQueue, McpTaskQueueStats } from './mcp-task.queue';
import { argumentsDigest, isTaskExpired, toDetailedTask, toWireTask, toWireTask2026 } from './task-wire';
import { McpDrainService } from '../shutdown/mcp-drain.service';
import { McpLimitExceededError } from '../config/limit-exceeded.errors';
import { listedSessionOf, ownsTask, taskOwnerOf } from './task-owner';
import { McpRedisOutageLog } from '../../redis-outage-log';

/** The client's answer to one input request of a task: its result, or the JSON-RPC error it sent. */
type InputAnswer = McpTaskInputAnswer;

/** One input request a task's handler is waiting on, on this worker. */
interface InputWaiter {
  method: string;
  params: Record<string, unknown>;
  settle(answer: InputAnswer): void;
}

/** The error `tasks/result` answers for a cancelled task. */
const CANCELLED_ERROR_CODE = JsonRpcErrorCode.InternalError;
/** The error `tasks/result` answers when the task is still running at its deadline (the SDK's request timeout code). */
const RESULT_TIMEOUT_CODE = -32001;
const NOT_FOUND = 'Failed to retrieve task: Task not found';

/**
 * The tasks of one mount (experimental tasks of 2025-11-25): creates them for task-augmented
 * `tools/call` requests, runs them on the queue's workers, and serves `tasks/get`,
 * `tasks/result`, `tasks/list` and `tasks/cancel` from the rows, so any replica answers for any
 * task. A task is claimed with one conditional UPDATE before its handler runs: it runs at most
 * once, unless its worker died and the tool is idempotent.
 */
@Injectable()
export class McpTaskService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger: Logger;
  private readonly worker = `${process.pid}-${randomBytes(9).toString('base64url')}`;
  private queue: McpTaskQueue = new McpInlineTaskQueue();
  private readonly running = new Map<string, AbortController>();
  /** The input requests of the tasks running here, by task id then key. */
  private readonly asking = new Map<string, Map<string, InputWaiter>>();
  /** The last row write of each task's input requests: writes of one task happen in order. */
  private readonly inputWrites = new Map<string, Promise<void>>();
  private readonly finished = new EventEmitter();
  private unsubscribe?: () => Promise<void>;
  private closing = false;
  private started = false;
  private starting?: Promise<void>;

  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly toolset: Toolset,
    @InjectMcpTaskStore() private readonly store: McpTaskStore,
    @InjectMcpEventSink() private readonly events: McpEventSink,
    private readonly mountBus: McpMountBus,
    private readonly bus: McpSessionBus,
    private readonly listenStreams: McpListenStreams,
    private readonly drain: McpDrainService,
  ) {
    this.logger = new Logger(`McpTaskService:${options.mount}`);
    this.finished.setMaxListeners(0);
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
    await this.queue.start((id) => this.run(id), this.options.tasks.concurrency);
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
    if (!this.started) return;
    for (const controller of this.running.values()) controller.abort(new Error('The worker is shutting down'));
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
    await this.audit(record, 'created');
    await this.queue.enqueue(record.id);
    // The row is committed before the answer leaves: a tasks/get on any replica finds it.
    if (isStatelessVersion(context.protocolVersion)) return { resultType: TASK_RESULT_TYPE, ...toWireTask2026(record) };
    return { task: toWireTask(record) };
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

  /** Runs one task on this worker: claim, handler, outcome. */
  private async run(id: string): Promise<void> {
    const record = await this.store.get(id);
    if (!record || isTerminalTaskStatus(record.status) || isTaskExpired(record)) return;
    const tool = this.toolset.get(record.toolName);
    if (await this.store.claim(id, this.worker, null))
      return this.execute({ ...record, worker: this.worker, attempt: record.attempt + 1 }, tool);
    // Claimed before: its worker died (the queue handed the job on) or the process restarted.
    const current = await this.store.get(id);
    if (!current || isTerminalTaskStatus(current.status) || current.worker === this.worker) return;
    if (tool?.idempotent && (await this.store.claim(id, this.worker, current.worker))) {
      const mine = { ...current, worker: this.worker, attempt: current.attempt + 1 };
      await this.audit(mine, 'rerun', `worker ${current.worker} stopped; the tool is idempotent`);
      return this.execute(mine, tool);
    }
    await this.end(current, 'failed', 'Interrupted: the worker running the task stopped before it finished', {
      error: {
        code: JsonRpcErrorCode.InternalError,
        message: 'The task was interrupted: the worker running it stopped before it finished',
      },
    });
  }

  private async execute(record: McpTaskRecord, tool: RegisteredTool | undefined): Promise<void> {
    if (!tool) {
      await this.end(record, 'failed', `Unknown tool: ${record.toolName}`, {
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
    await this.audit(record, 'started');
    try {
      const outcome = await this.invoke(record, controller.signal);
      if (controller.signal.aborted && (this.closing || inFlight.signal.aborted)) {
        await this.end(record, 'failed', 'Interrupted: the worker shut down', {
          error: { code: JsonRpcErrorCode.InternalError, message: 'The task was interrupted: the worker shut down' },
        });
      } else if ('error' in outcome) {
        await this.end(
          record,
          'failed',
          // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a tool's error message may be any value; the status message is its text
          String((outcome.error as { message?: unknown }).message ?? 'The tool call failed'),
          outcome,
        );
      } else {
        const result = outcome.result as Record<string, unknown>;
        // 2025-11-25 ends a tool error as failed; the extension of 2026-07-28 keeps failed for JSON-RPC errors.
        const failed = result.isError === true && !isStatelessVersion(record.payload.protocolVersion);
        await this.end(
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
    const counter = { n: 0, unnamed: 0 };
    const context: McpDeliveryContext = {
      principal: payload.principal,
      sessionId,
      protocolVersion: payload.protocolVersion,
      signal,
      logLevel: (payload.logLevel ?? null) as McpLogLevel | null,
      notify: sessionId ? (notification) => this.bus.notifySession(sessionId, notification) : undefined,
      task: { id: record.id, update: (message) => this.update(record.id, message) },
      clientCapabilities: payload.clientCapabilities ?? null,
      client: { request: (method, params, options) => this.ask(record, counter, method, params, options, signal) },
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

  /**
   * One request of a task's handler to the client (`ctx.elicit`, `sample`, `listRoots`): kept in
   * the row as an input request (the task is `input_required` while any is outstanding), answered
   * through `tasks/update` (2026-07-28) or the stream of a `tasks/result` (2025-11-25) on any
   * replica, the answer reaching this worker on the task channel. Rejects like outside tasks:
   * `McpClientRequestError` for the client's error, `McpClientRequestTimeoutError` after
   * `tasks.inputTimeoutMs`; with the signal's reason when the task is cancelled.
   */
  private async ask(
    record: McpTaskRecord,
    counter: { n: number; unnamed: number },
    method: string,
    params: Record<string, unknown>,
    options: McpInputRequestOptions | undefined,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    // The requests the handler made before its task existed (`inputBeforeTask`) were answered in
    // the call's rounds: the same request (the key a round gave it) gets that answer again.
    const kind = CLIENT_CAPABILITY_OF_REQUEST.get(method) ?? 'input';
    const roundKey = options?.key ?? `${kind}-${++counter.unnamed}`;
    const replayed = record.payload.answers?.[roundKey];
    if (replayed !== undefined) {
      counter.n++;
      return checkInputResponse(roundKey, method, replayed);
    }
    // Keys stay unique over the task's life: a rerun (idempotent tool) numbers its own.
    const automatic = `${record.attempt > 1 ? `a${record.attempt}-` : ''}${kind}-${++counter.n}`;
    const key = options?.key ?? automatic;
    if (typeof key !== 'string' || key === '')
      throw new TypeError(`The key of an input request must be a non-empty string (got ${JSON.stringify(key)})`);
    if (signal.aborted) throw signal.reason ?? new Error('The task was cancelled');
    const pending = this.asking.get(record.id) ?? new Map<string, InputWaiter>();
    if (pending.has(key))
      throw new TypeError(`The input request key "${key}" is already outstanding in task ${record.id}`);
    this.asking.set(record.id, pending);
    const timeoutMs = this.options.tasks.inputTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const answer = new Promise<InputAnswer>((resolve, reject) => {
      pending.set(key, { method, params, settle: resolve });
      timer = setTimeout(() => reject(new McpClientRequestTimeoutError(method, timeoutMs)), timeoutMs);
      onAbort = () => reject(signal.reason ?? new Error('The task was cancelled'));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    let settled: InputAnswer;
    try {
      await this.writeInputs(record.id);
      settled = await answer;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort as () => void);
      pending.delete(key);
      if (pending.size === 0) this.asking.delete(record.id);
      await this.writeInputs(record.id);
    }
    if ('error' in settled)
      throw new McpClientRequestError(method, settled.error.code, settled.error.message, settled.error.data);
    return settled.result;
  }

  /** Writes the task's outstanding input requests to its row (in order per task), then tells the client and the waiting `tasks/result`s. */
  private writeInputs(id: string): Promise<void> {
    const write = async () => {
      const pending = this.asking.get(id);
      const requests = pending?.size
        ? Object.fromEntries(
            [...pending].map(([key, waiter]) => [key, { method: waiter.method, params: waiter.params }]),
          )
        : null;
      const current = await this.store.get(id);
      // Nothing to say when the row already stands where it should (the last answer of several).
      if (!current || isTerminalTaskStatus(current.status) || (!requests && current.status === 'working')) return;
      const record = await this.store.setInputRequests(id, requests);
      if (!record) return;
      await this.audit(
        record,
        requests ? 'input_required' : 'resumed',
        requests ? `task input_required: ${Object.keys(requests).join(', ')}` : undefined,
      );
      await this.notify(record);
      this.finished.emit(id);
      if (this.mountBus.distributed) await this.publish({ t: 's', id });
    };
    const next = (this.inputWrites.get(id) ?? Promise.resolve()).then(write, write);
    const tracked = next.finally(() => {
      if (this.inputWrites.get(id) === tracked) this.inputWrites.delete(id);
    });
    this.inputWrites.set(id, tracked);
    return next;
  }

  /** Hands the answer to input request `key` of a task to the handler waiting for it: here, or on the task channel. */
  private async answerInput(id: string, key: string, answer: InputAnswer): Promise<void> {
    if (this.settleHere(id, key, answer)) return;
    if (this.mountBus.distributed) await this.publish({ t: 'i', id, key, ...answer });
  }

  private settleHere(id: string, key: string, answer: InputAnswer): boolean {
    const waiter = this.asking.get(id)?.get(key);
    if (!waiter) return false;
    waiter.settle(answer);
    return true;
  }

  private async update(id: string, statusMessage: string): Promise<boolean> {
    const record = await this.store.setMessage(id, statusMessage);
    if (!record) return false;
    await this.audit(record, 'message');
    await this.notify(record);
    return true;
  }

  /** Moves a task to a terminal status (if it is not over yet), tells its session and wakes the waiting `tasks/result`s. */
  private async end(
    record: McpTaskRecord,
    status: string,
    statusMessage: string | undefined,
    outcome: Record<string, unknown>,
  ): Promise<McpTaskRecord | null> {
    const ended = await this.store.finish(record.id, status, statusMessage, outcome);
    if (!ended) return null;
    await this.audit(ended, status, undefined, outcome);
    await this.notify(ended);
    this.finished.emit(ended.id);
    if (this.mountBus.distributed) await this.publish({ t: 'd', id: ended.id });
    return ended;
  }

  private async owned(request: JsonRpcRequest, context: McpDeliveryContext): Promise<McpTaskRecord> {
    if (isStatelessVersion(context.protocolVersion) && !declaresTasksExtension(context.clientCapabilities)) {
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
    return isStatelessVersion(context.protocolVersion) ? toDetailedTask(record) : toWireTask(record);
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
    if (!isStatelessVersion(context.protocolVersion))
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
    for (const [key, result] of answers) await this.answerInput(record.id, key, { result });
    return {};
  }

  private async result(request: JsonRpcRequest, context: McpDeliveryContext): Promise<Record<string, unknown>> {
    const deadline = Date.now() + this.options.tasks.resultTimeoutMs;
    let record = await this.owned(request, context);
    const forwarded = new Set<string>();
    while (!isTerminalTaskStatus(record.status)) {
      this.forwardInputs(record, context, forwarded);
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new McpRpcError(
          RESULT_TIMEOUT_CODE,
          `Task ${record.id} is still ${record.status} after ${this.options.tasks.resultTimeoutMs} ms: call tasks/result again`,
        );
      }
      await this.waitForEnd(record.id, Math.min(left, record.pollIntervalMs), context.signal);
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

  /**
   * 2025-11-25: the outstanding input requests of a task, sent to the client on the stream of its
   * `tasks/result` (each once per call, with the related-task `_meta`). The client's answer comes
   * back on any replica and goes to the waiting handler; a request the client never answers is the
   * handler's deadline to keep, not this call's.
   */
  private forwardInputs(record: McpTaskRecord, context: McpDeliveryContext, forwarded: Set<string>): void {
    const client = context.client;
    if (!client || record.status !== 'input_required') return;
    for (const [key, input] of Object.entries(inputRequestsOf(record))) {
      if (forwarded.has(key)) continue;
      forwarded.add(key);
      const meta = {
        ...(input.params._meta as Record<string, unknown> | undefined),
        [RELATED_TASK_META_KEY]: { taskId: record.id },
      };
      client
        .request(input.method, { ...input.params, _meta: meta })
        .then(
          (result) => this.answerInput(record.id, key, { result }),
          (error: unknown) => {
            if (error instanceof McpClientRequestError)
              return this.answerInput(record.id, key, {
                error: {
                  code: error.code,
                  message: refusalText(error),
                  ...(error.data !== undefined ? { data: error.data } : {}),
                },
              });
          },
        )
        .catch((error: unknown) =>
          this.logger.warn(`Could not pass on the answer to input ${key} of task ${record.id}: ${errorText(error)}`),
        );
    }
  }

  /** Resolves when the task ends (here or, on the bus, elsewhere), after `ms`, or on abort: the caller reads the row again. */
  private waitForEnd(id: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.finished.off(id, done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.finished.on(id, done);
      signal?.addEventListener('abort', done, { once: true });
    });
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
    // 2026-07-28: an empty acknowledgment, also for a task that is already over (cancellation is cooperative).
    if (isStatelessVersion(context.protocolVersion)) {
      if (!isTerminalTaskStatus(record.status)) await this.cancelRunning(record);
      return {};
    }
    const refuse = (status: string) =>
      new McpRpcError(JsonRpcErrorCode.InvalidParams, `Cannot cancel task: already in terminal status '${status}'`);
    if (isTerminalTaskStatus(record.status)) throw refuse(record.status);
    const cancelled = await this.end(record, 'cancelled', 'The task was cancelled by request', {
      error: { code: CANCELLED_ERROR_CODE, message: `Task ${record.id} was cancelled` },
    });
    if (!cancelled) throw refuse((await this.store.get(record.id))?.status ?? 'cancelled');
    this.abortHere(record.id);
    if (this.mountBus.distributed) await this.publish({ t: 'c', id: record.id });
    return toWireTask(cancelled);
  }

  private async cancelRunning(record: McpTaskRecord): Promise<void> {
    const cancelled = await this.end(record, 'cancelled', 'The task was cancelled by request', {
      error: { code: CANCELLED_ERROR_CODE, message: `Task ${record.id} was cancelled` },
    });
    if (!cancelled) return;
    this.abortHere(record.id);
    if (this.mountBus.distributed) await this.publish({ t: 'c', id: record.id });
  }

  private abortHere(id: string): void {
    this.running.get(id)?.abort(new Error('The task was cancelled'));
  }

  /**
   * Queues the unfinished tasks a dead process of this mount left: one it never claimed runs
   * now; one it claimed ends interrupted (or runs again, idempotent tools), as `run` decides.
   */
  private async sweep(): Promise<void> {
    for (const record of await this.store.unfinished()) {
      if (record.worker !== this.worker && !isTaskExpired(record)) await this.queue.enqueue(record.id);
    }
  }

  private async notify(record: McpTaskRecord): Promise<void> {
    const stateless = isStatelessVersion(record.payload.protocolVersion);
    if (!record.sessionId && !stateless) return;
    try {
      // 2026-07-28: to the listen streams (on every replica) that agreed to this task id.
      if (stateless)
        await this.listenStreams.publish({ jsonrpc: '2.0', method: McpMethod.Tasks, params: toDetailedTask(record) });
      else
        await this.bus.notifySession(record.sessionId as string, {
          jsonrpc: '2.0',
          method: McpMethod.TasksStatus,
          params: toWireTask(record),
        });
    } catch (error) {
      // The notification is optional (clients poll); the row already says it.
      this.logger.warn(`Could not send the status of task ${record.id}: ${errorText(error)}`);
    }
  }

  /** One `mcp_events` row (kind `task`) per transition. */
  private async audit(
    record: McpTaskRecord,
    transition: string,
    note?: string,
    outcome?: Record<string, unknown>,
  ): Promise<void> {
    const result = outcome?.result as Record<string, unknown> | undefined;
    const error = outcome?.error as { code?: number } | undefined;
    await this.events.record({
      direction: 'inbound',
      kind: 'task',
      mount: this.options.mount,
      principalKey: record.principalKey,
      method: McpMethod.ToolsCall,
      protocolVersion: record.payload.protocolVersion,
      request: {
        taskId: record.id,
        tool: record.toolName,
        transition,
        status: record.status,
        statusMessage: record.statusMessage,
        worker: record.worker,
        attempt: record.attempt,
      },
      response: outcome ?? null,
      errorCode: typeof error?.code === 'number' ? error.code : null,
      isError: result?.isError === true,
      createdAt: new Date(),
      durationMs: 0,
      note: note ?? `task ${transition}`,
    });
  }

  private async publish(message: McpTaskBusMessage): Promise<void> {
    await this.mountBus.publish('tasks', message);
  }

  private receive(message: McpTaskBusMessage): void {
    if (message.t === 'i') {
      const { t: _t, id, key, ...answer } = message;
      this.settleHere(id, key, answer);
      return;
    }
    if (message.t === 'c') this.abortHere(message.id);
    this.finished.emit(message.id);
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

/** The outstanding input requests a task's row holds (none unless it is `input_required`). */
function inputRequestsOf(record: McpTaskRecord): Record<string, { method: string; params: Record<string, unknown> }> {
  if (record.status !== 'input_required') return {};
  const requests = record.outcome?.inputRequests;
  return requests && typeof requests === 'object'
    ? (requests as Record<string, { method: string; params: Record<string, unknown> }>)
    : {};
}

/** The client's own message inside a `McpClientRequestError` (its message wraps it). */
function refusalText(error: McpClientRequestError): string {
  const prefix = `The client refused ${error.method}: `;
  const suffix = ` (${error.code})`;
  const text = error.message;
  return text.startsWith(prefix) && text.endsWith(suffix)
    ? text.slice(prefix.length, text.length - suffix.length)
    : text;
}

/** The text of an `isError` result, for the status message. */
function failureText(result: Record<string, unknown>): string {
  const first = (result.content as { type?: string; text?: string }[] | undefined)?.find(
    (block) => block.type === 'text',
  );
  return first?.text ?? 'The tool reported an error';
}
