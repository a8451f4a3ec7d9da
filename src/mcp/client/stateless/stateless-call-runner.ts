import { Inject, Injectable } from '@nestjs/common';
import { McpCallInterruptedError, McpCapabilityError, McpInvalidToolError } from '../../errors/mcp-client-call.errors';
import { McpClientError, McpProtocolError, McpServerError, McpTransportError } from '../../errors/mcp-client.errors';
import type { JsonRpcErrorObject } from '../../protocol/jsonrpc';
import { TASKS_EXTENSION, TASK_RESULT_TYPE } from '../../protocol/tasks';
import { createdTask, pollTask } from '../tasks/task-poller';
import { McpInputRequiredError } from '../../errors/mcp-input-required.errors';
import type {
  McpOutboundSessionRecord,
  McpOutboundSessionStore,
} from '../../persistence/interfaces/mcp-outbound-session-store.interface';
import { InjectMcpOutboundSessionStore } from '../../persistence/mcp-persistence.constants';
import { McpMethod } from '../../protocol/mcp-methods';
import { StatelessMetaKey, ResultType } from '../../protocol/stateless';
import { allowsMethod, requiredCapability } from '../capabilities';
import type { McpResolvedClientOptions } from '../config/client-options-resolver';
import { McpServerRequestDispatcher } from '../handlers/server-request-dispatcher';
import type { McpCallJob, McpCallServerRequestHandler } from '../interfaces/mcp-call.interface';
import type { McpCallAttempt } from '../interfaces/mcp-call-attempt.interface';
import { MCP_CLIENT_OPTIONS } from '../mcp-client.constants';
import { McpOutboundExchanger } from '../outbound-exchange';
import { McpToolListCache } from '../tool-list-cache';
import type { McpToolDefinition } from '../tool-router';
import { McpTransportRegistry } from '../transports/transport-registry';
import type { McpServerNotificationHandler } from '../transports/mcp-transport.interface';
import { observeCall, refuseAborted } from '../call-observer';
import type { McpEraVerdict } from './discover-verdict';
import { McpEnvelopeFactory } from './envelope.factory';
import { fulfilInputRequests, type McpInputRetry } from './input-required';
import { withEnvelope, type StatelessEnvelope } from './stateless-request';
import { paramHeaders } from './param-headers';
import { McpRevisionNegotiator } from './revision-negotiator';

type StatelessVerdict = Extract<McpEraVerdict, { era: 'stateless' }>;

/**
 * A complete result as a 2025-era server would have given it: the `serverInfo` every stateless result
 * carries in `_meta` is kept with the outbound session, not handed to each caller.
 */
function withoutServerInfo(result: Record<string, unknown>): Record<string, unknown> {
  const meta = result._meta as Record<string, unknown> | undefined;
  if (!meta || typeof meta !== 'object' || !(StatelessMetaKey.ServerInfo in meta)) return result;
  const { [StatelessMetaKey.ServerInfo]: _serverInfo, ...others } = meta;
  const { _meta: _dropped, ...rest } = result;
  return Object.keys(others).length ? { ...rest, _meta: others } : rest;
}

/** The envelope with the tasks extension declared in its client capabilities. */
function withTasksExtension(envelope: StatelessEnvelope): StatelessEnvelope {
  const extensions = (envelope.clientCapabilities.extensions as Record<string, unknown> | undefined) ?? {};
  return {
    ...envelope,
    clientCapabilities: { ...envelope.clientCapabilities, extensions: { ...extensions, [TASKS_EXTENSION]: {} } },
  };
}

/** Most pages of `tools/list` read to find a tool's schema (a server that never ends its list). */
const MAX_TOOL_PAGES = 1000;

/** Receives a call's notifications with where they arrived (see `observeCall`). */
type Notify = McpServerNotificationHandler;

/** HTTP statuses with which a server that was taken for a stateless one refuses a stateless request. */
const ERA_CHANGED_STATUSES = new Set([400, 404, 405]);

/**
 * Runs one call on a 2026-07-28 server: every request carries the `_meta` envelope, `ping` is
 * answered by `server/discover`, `logging/setLevel` becomes the envelope's log level, and
 * `input_required` answers are fulfilled with the registered handlers and retried with a new id,
 * `inputResponses` and the untouched `requestState`, at most `maxInputRounds` times. Those rounds
 * are new requests by design; a `tools/call` is still claimed once and never re-sent otherwise.
 * Over HTTP, a `tools/call` mirrors the arguments annotated `x-mcp-header` into `Mcp-Param-*` headers; the
 * schema comes from the process's tool list cache, filled here with `tools/list` when empty (a
 * queue worker has not listed anything), and a tool the list left out is refused.
 */
@Injectable()
export class McpStatelessCallRunner {
  constructor(
    @Inject(MCP_CLIENT_OPTIONS) private readonly options: McpResolvedClientOptions,
    private readonly transports: McpTransportRegistry,
    @InjectMcpOutboundSessionStore() private readonly sessions: McpOutboundSessionStore,
    private readonly exchanger: McpOutboundExchanger,
    private readonly envelopes: McpEnvelopeFactory,
    private readonly dispatcher: McpServerRequestDispatcher,
    private readonly negotiator: McpRevisionNegotiator,
    private readonly toolLists: McpToolListCache,
  ) {}

  /** Runs the call and resolves to its complete result. */
  async run(
    job: McpCallJob,
    attempt: McpCallAttempt,
    verdict: StatelessVerdict,
    session: McpOutboundSessionRecord | null,
  ): Promise<Record<string, unknown>> {
    if (job.method === McpMethod.LoggingSetLevel) {
      this.envelopes.setLogLevel(job, String(job.params?.level));
      return {};
    }
    const notify = observeCall(job, attempt);
    const method = job.method === McpMethod.Ping ? McpMethod.ServerDiscover : job.method;
    const capabilities = await this.capabilities(job, verdict, session, notify);
    if (capabilities && !allowsMethod(capabilities, method))
      throw new McpCapabilityError(job.server, requiredCapability(method) as string, method);
    const isCall = method === McpMethod.ToolsCall;
    // Other transports may ignore x-mcp-header (the headers exist for HTTP intermediaries).
    const overHttp = this.transports.sendsRoutingHeaders(job.server);
    const headers = isCall && overHttp ? await this.paramHeaders(job, session, notify, verdict.version) : undefined;
    const asTask = isCall && job.task !== undefined;
    const stored = asTask ? await attempt.storedTask() : null;
    // An earlier run created the task (and its worker died): poll it, never call the tool again.
    if (stored)
      return this.finishTask(job, session, notify, verdict.version, stored.taskId, attempt.signal, attempt.answer);
    refuseAborted(job, attempt);
    if (isCall && !(await attempt.claim())) throw new McpCallInterruptedError(attempt.id);
    let result: Record<string, unknown>;
    try {
      result = await this.rounds(
        job,
        session,
        notify,
        method,
        verdict.version,
        headers,
        attempt.signal,
        attempt.answer,
      );
    } catch (error) {
      if (!(error instanceof McpClientError) || error.delivered) throw error;
      if (isCall) await attempt.release();
      if (error instanceof McpTransportError && error.status !== undefined && ERA_CHANGED_STATUSES.has(error.status))
        await this.negotiator.forget(job);
      throw error;
    }
    if (!asTask || result.resultType !== TASK_RESULT_TYPE) return result;
    const taskId = createdTask(job.server, result).taskId as string;
    await attempt.rememberTask({ taskId, protocolVersion: verdict.version });
    return this.finishTask(job, session, notify, verdict.version, taskId, attempt.signal, attempt.answer);
  }

  /**
   * Polls a task of the tasks extension (`tasks/get`, the extension declared, `Mcp-Name: <taskId>`)
   * until it is over: a completed task carries the tool's result, a failed one its JSON-RPC
   * error (`McpServerError`); a task cancelled by someone else fails with -32603. The input
   * requests of an `input_required` task are answered by the client's handlers (each key once)
   * with `tasks/update`; one they cannot answer cancels the task and fails the call with
   * `McpInputRequiredError`.
   */
  private async finishTask(
    job: McpCallJob,
    session: McpOutboundSessionRecord | null,
    notify: Notify,
    version: string,
    taskId: string,
    signal?: AbortSignal,
    own?: McpCallServerRequestHandler,
  ): Promise<Record<string, unknown>> {
    const ask = async (method: string, extra: Record<string, unknown> = {}) => {
      const params = withEnvelope(
        { taskId, ...extra },
        withTasksExtension(this.envelopes.forCall(job, version, own !== undefined)),
      );
      return (await this.exchanger.call({ job, session, notify, method, params, statelessVersion: version })).result;
    };
    const cancel = async () => void (await ask(McpMethod.TasksCancel));
    const answer = this.dispatcher.forCall(job.server, job.scopeKey, own, signal);
    // Keys are unique over a task's life: each request is answered once, however often it is polled.
    const answered = new Set<string>();
    const onInputRequired = async (task: Record<string, unknown>) => {
      const requests =
        task.inputRequests && typeof task.inputRequests === 'object'
          ? (task.inputRequests as Record<string, unknown>)
          : {};
      const fresh = Object.fromEntries(Object.entries(requests).filter(([key]) => !answered.has(key)));
      if (!Object.keys(fresh).length) return;
      let inputResponses: Record<string, unknown> | undefined;
      try {
        ({ inputResponses } = await fulfilInputRequests(
          job.server,
          McpMethod.ToolsCall,
          { inputRequests: fresh },
          answer,
        ));
      } catch (error) {
        // A request the client cannot answer would leave the task waiting: it is cancelled.
        await cancel().catch(() => undefined);
        throw error;
      }
      for (const key of Object.keys(fresh)) answered.add(key);
      await ask(McpMethod.TasksUpdate, { inputResponses });
    };
    const task = await pollTask({
      job,
      taskId,
      ...(signal ? { signal } : {}),
      get: () => ask(McpMethod.TasksGet),
      cancel,
      onInputRequired,
    });
    if (task.status === 'completed' && task.result && typeof task.result === 'object') {
      const { resultType: _type, ...result } = task.result as Record<string, unknown>;
      return withoutServerInfo(result);
    }
    if (task.status === 'failed' && task.error && typeof task.error === 'object')
      throw new McpServerError(task.error as JsonRpcErrorObject);
    const message =
      task.status === 'cancelled'
        ? `Task ${taskId} was cancelled`
        : `Task ${taskId} ended ${String(task.status)} without a result`;
    throw new McpServerError({ code: -32603, message });
  }

  /** The server's capabilities: known from the verdict or the session, else asked with `server/discover`. */
  private async capabilities(
    job: McpCallJob,
    verdict: StatelessVerdict,
    session: McpOutboundSessionRecord | null,
    notify: Notify,
  ): Promise<Record<string, unknown> | null> {
    let { capabilities, serverInfo } = verdict;
    if (!capabilities && requiredCapability(job.method)) {
      const params = withEnvelope(undefined, this.envelopes.forCall(job, verdict.version));
      const { result } = await this.exchanger.call({
        job,
        session,
        notify,
        method: McpMethod.ServerDiscover,
        params,
        statelessVersion: verdict.version,
      });
      capabilities = (result.capabilities as Record<string, unknown> | undefined) ?? null;
      serverInfo =
        ((result._meta as Record<string, unknown> | undefined)?.[StatelessMetaKey.ServerInfo] as
          Record<string, unknown> | undefined) ?? null;
    }
    const known =
      session?.protocolVersion === verdict.version &&
      JSON.stringify(session.serverCapabilities) === JSON.stringify(capabilities);
    if (!known && capabilities) {
      const endpoint = this.transports.endpointKey(job.server);
      await this.sessions.save(job.server, job.scopeKey, {
        remoteSessionId: null,
        protocolVersion: verdict.version,
        serverInfo,
        serverCapabilities: capabilities,
        endpoint,
      });
    }
    return capabilities;
  }

  /** The `Mcp-Param-*` headers of a `tools/call`. @throws McpInvalidToolError for a tool left out of the list. */
  private async paramHeaders(
    job: McpCallJob,
    session: McpOutboundSessionRecord | null,
    notify: Notify,
    version: string,
  ): Promise<Record<string, string>> {
    const name = String(job.params?.name);
    const list = await this.toolLists.get(job.server, job.scopeKey, () =>
      this.listTools(job, session, notify, version),
    );
    const reason = list.rejected.get(name);
    if (reason !== undefined) throw new McpInvalidToolError(job.server, name, reason);
    return paramHeaders(list.headers.get(name) ?? [], job.params?.arguments);
  }

  /** Every page of `tools/list`, asked directly: a worker must not wait on its own queue. */
  private async listTools(
    job: McpCallJob,
    session: McpOutboundSessionRecord | null,
    notify: Notify,
    version: string,
  ): Promise<McpToolDefinition[]> {
    const tools: McpToolDefinition[] = [];
    let cursor: unknown;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const listing: McpCallJob = {
        ...job,
        method: McpMethod.ToolsList,
        params: cursor === undefined ? {} : { cursor },
      };
      const result = await this.rounds(listing, session, notify, McpMethod.ToolsList, version);
      tools.push(...((result.tools as McpToolDefinition[] | undefined) ?? []));
      cursor = result.nextCursor;
      if (typeof cursor !== 'string' || !cursor) return tools;
    }
    throw new McpProtocolError(
      `MCP server "${job.server}" returned more than ${MAX_TOOL_PAGES} pages for tools/list`,
      false,
    );
  }

  private async rounds(
    job: McpCallJob,
    session: McpOutboundSessionRecord | null,
    notify: Notify,
    method: string,
    version: string,
    headers?: Record<string, string>,
    signal?: AbortSignal,
    own?: McpCallServerRequestHandler,
  ): Promise<Record<string, unknown>> {
    const answer = this.dispatcher.forCall(job.server, job.scopeKey, own, signal);
    let retry: McpInputRetry = {};
    for (let round = 0; ; round++) {
      const envelope = this.envelopes.forCall(job, version, own !== undefined);
      const asTask = job.task !== undefined && method === McpMethod.ToolsCall;
      const params = withEnvelope(
        { ...(job.params ?? {}), ...retry },
        asTask ? withTasksExtension(envelope) : envelope,
      );
      const { result } = await this.exchanger.call({
        job,
        session,
        notify,
        method,
        params,
        statelessVersion: version,
        headers,
        ...(signal ? { signal } : {}),
      });
      const { resultType = ResultType.Complete, ...rest } = result;
      if (resultType === ResultType.Complete) return withoutServerInfo(rest);
      // The server made the call a task: the caller polls it (the marker stays for it).
      if (resultType === TASK_RESULT_TYPE && asTask) return { resultType, ...rest };
      if (resultType !== ResultType.InputRequired) {
        throw new McpProtocolError(
          `MCP server "${job.server}" answered ${method} with an unknown resultType ${JSON.stringify(resultType)}`,
          true,
        );
      }
      if (job.returnInputRequired) return { resultType, ...rest };
      if (round >= this.options.maxInputRounds) {
        throw new McpInputRequiredError(
          `MCP server "${job.server}" still required input after ${round} rounds of ${method} (maxInputRounds)`,
          job.server,
          method,
        );
      }
      retry = await fulfilInputRequests(job.server, method, result, answer);
    }
  }
}
