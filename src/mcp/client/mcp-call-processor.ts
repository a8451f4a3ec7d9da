import { Injectable } from '@nestjs/common';
import { McpCallInterruptedError, McpCapabilityError } from '../errors/mcp-client-call.errors';
import { McpClientError, McpServerError, McpTimeoutError } from '../errors/mcp-client.errors';
import type { McpOutboundSessionStore } from '../persistence/interfaces/mcp-outbound-session-store.interface';
import { InjectMcpOutboundSessionStore } from '../persistence/mcp-persistence.constants';
import type { McpOutboundSessionRecord } from '../persistence/interfaces/mcp-outbound-session-store.interface';
import type { McpHandshakeInfo, McpServerNotificationHandler } from './transports/mcp-transport.interface';
import { allowsTaskCalls } from './tasks/task-support';
import { createdTask, isCreateTaskResult, pollTask } from './tasks/task-poller';
import { McpMethod } from '../protocol/mcp-methods';
import { STATELESS_PROTOCOL_VERSION } from '../protocol/stateless';
import { allowsMethod, requiredCapability } from './capabilities';
import { observeCall, refuseAborted } from './call-observer';
import type { McpCallAttempt } from './interfaces/mcp-call-attempt.interface';
import type { McpCallJob, McpCallServerRequestHandler } from './interfaces/mcp-call.interface';
import { McpStatelessCallRunner } from './stateless/stateless-call-runner';
import { McpRevisionNegotiator } from './stateless/revision-negotiator';
import { McpOutboundExchanger } from './outbound-exchange';
import { McpTransportRegistry } from './transports/transport-registry';

/** What a 2025-11-25 `tasks/result` answers when the task is still running at the server's wait limit. */
const TASK_RESULT_TIMEOUT_CODE = -32001;

/**
 * Runs one outbound call, on whichever worker picked it up. First decides the revision (pinned,
 * or the verdict of `version: 'auto'`); a 2026-07-28 server is served by `McpStatelessCallRunner`.
 * On the 2025 path it continues the persisted remote session of (server, scope key), refuses
 * methods the server did not declare, answers server->client requests with the registered
 * handlers, writes one event row per exchange and maps JSON-RPC errors to `McpServerError`.
 * Retries are the queue's business.
 */
@Injectable()
export class McpCallProcessor {
  constructor(
    private readonly transports: McpTransportRegistry,
    @InjectMcpOutboundSessionStore() private readonly sessions: McpOutboundSessionStore,
    private readonly exchanger: McpOutboundExchanger,
    private readonly negotiator: McpRevisionNegotiator,
    private readonly stateless: McpStatelessCallRunner,
  ) {}

  /** Runs the call and resolves to its JSON-RPC result. */
  async process(job: McpCallJob, attempt: McpCallAttempt): Promise<Record<string, unknown>> {
    this.transports.config(job.server);
    // A run that resumes a task past the deadline goes on: polling cancels the task and says so.
    if (job.deadlineAt !== undefined && Date.now() >= job.deadlineAt && !(job.task && (await attempt.storedTask()))) {
      // A retry (or a job that waited in the queue) past the caller's deadline is not started.
      throw new McpTimeoutError(
        `MCP server "${job.server}": the call's deadline of ${job.timeoutMs} ms passed before this attempt could start`,
        false,
        job.timeoutMs,
      );
    }
    let session = await this.sessions.find(job.server, job.scopeKey);
    const notify = observeCall(job, attempt);
    const verdict = await this.negotiator.resolve(job, session, notify);
    if (verdict.era === 'stateless') return this.stateless.run(job, attempt, verdict, session);
    // A row left by a stateless verdict holds no session to continue.
    if (session?.protocolVersion === STATELESS_PROTOCOL_VERSION) session = null;
    const capability = requiredCapability(job.method);
    if (session?.serverCapabilities && !allowsMethod(session.serverCapabilities, job.method)) {
      throw new McpCapabilityError(job.server, capability as string, job.method);
    }
    // Without known capabilities, the call's own handshake (a spawn-per-call stdio process, a new
    // HTTP session) tells them: the transport asks before it sends. No separate ping exchange,
    // which would cost a second process and fail on servers without ping.
    const onHandshake = capability
      ? (handshake: McpHandshakeInfo) => {
          if (handshake.capabilities && !allowsMethod(handshake.capabilities, job.method))
            throw new McpCapabilityError(job.server, capability, job.method);
        }
      : undefined;
    const isCall = job.method === McpMethod.ToolsCall;
    const asTask = isCall && job.task !== undefined;
    const stored = asTask ? await attempt.storedTask() : null;
    // An earlier run created the task (and its worker died): poll it, never call the tool again.
    if (stored) return this.finishTask(job, session, notify, stored.taskId, attempt.signal, attempt.answer);
    refuseAborted(job, attempt);
    if (isCall && !(await attempt.claim())) throw new McpCallInterruptedError(attempt.id);
    const signal = attempt.signal;
    // A server that did not declare task-augmented calls is sent a plain call; one whose
    // capabilities are not known yet ignores `params.task` if it has no tasks (as the spec requires).
    const augment = asTask && (!session?.serverCapabilities || allowsTaskCalls(session.serverCapabilities));
    const params = augment
      ? { ...(job.params ?? {}), task: job.task?.ttlMs !== undefined ? { ttl: job.task.ttlMs } : {} }
      : job.params;
    let answer: { result: Record<string, unknown>; session: McpOutboundSessionRecord | null };
    try {
      answer = await this.exchanger.call({
        job,
        session,
        notify,
        method: job.method,
        params,
        onHandshake,
        ...(signal ? { signal } : {}),
        ...(attempt.answer ? { answer: attempt.answer } : {}),
      });
    } catch (error) {
      if (isCall && error instanceof McpClientError && !error.delivered) await attempt.release();
      throw error;
    }
    if (!augment || !isCreateTaskResult(answer.result)) return answer.result;
    const task = createdTask(job.server, answer.result);
    const taskId = task.taskId as string;
    await attempt.rememberTask({ taskId, protocolVersion: answer.session?.protocolVersion ?? 'unknown' });
    return this.finishTask(job, answer.session, notify, taskId, signal, attempt.answer);
  }

  /**
   * Polls a 2025-11-25 task (`tasks/get`) until it is over, then fetches what the call answers
   * (`tasks/result`: the tool's result, or its JSON-RPC error as `McpServerError`). A task that
   * is `input_required` gets its `tasks/result` at once: the server sends the task's requests on
   * that request's stream (the 2025 side channel), the client's handlers answer them as for any
   * call, and the result comes back on it when the task is over.
   */
  private async finishTask(
    job: McpCallJob,
    session: McpOutboundSessionRecord | null,
    notify: McpServerNotificationHandler,
    taskId: string,
    signal?: AbortSignal,
    answer?: McpCallServerRequestHandler,
  ): Promise<Record<string, unknown>> {
    const ask = async (method: string, abortable = false) =>
      (
        await this.exchanger.call({
          job,
          session,
          notify,
          method,
          params: { taskId },
          ...(abortable && signal ? { signal } : {}),
          ...(answer ? { answer } : {}),
        })
      ).result;
    let outcome: { result: Record<string, unknown> } | { error: McpServerError } | undefined;
    const onInputRequired = async () => {
      if (outcome) return;
      try {
        outcome = { result: await ask(McpMethod.TasksResult, true) };
      } catch (error) {
        // Aborted: the poller cancels the task. Still running at the server's wait limit, or the
        // stream broke: polling goes on and the next input_required asks again.
        if (signal?.aborted || !(error instanceof McpServerError) || error.code === TASK_RESULT_TIMEOUT_CODE) return;
        outcome = { error };
      }
    };
    await pollTask({
      job,
      taskId,
      ...(signal ? { signal } : {}),
      get: () => ask(McpMethod.TasksGet),
      cancel: async () => void (await ask(McpMethod.TasksCancel)),
      onInputRequired,
    });
    if (outcome && 'error' in outcome) throw outcome.error;
    return outcome?.result ?? ask(McpMethod.TasksResult);
  }
}
