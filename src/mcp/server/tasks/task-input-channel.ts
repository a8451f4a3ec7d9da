import { Inject, Injectable, Logger } from '@nestjs/common';
import { McpClientRequestError, McpClientRequestTimeoutError } from '../../errors/mcp-client-request.errors';
import type { McpDeliveryContext } from '../../interfaces/mcp-delivery.interface';
import type { McpInputRequestOptions } from '../../interfaces/mcp-tool-context.interface';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpTaskRecord } from '../../persistence/interfaces/mcp-task-store.interface';
import { CLIENT_CAPABILITY_OF_REQUEST } from '../../protocol/method-catalog';
import { RELATED_TASK_META_KEY } from '../../protocol/tasks';
import type { McpResolvedOptions } from '../config/mcp.options';
import { McpMountBus, type McpTaskInputAnswer } from '../pubsub/mount-bus';
import { checkInputResponse } from '../stateless/input-channel';
import { errorText } from '../tools/tool-result-mapper';
import { McpTaskTransitions, type McpTaskInputRequests } from './task-transitions';

/** One input request a task's handler is waiting on, on this worker. */
interface InputWaiter {
  method: string;
  params: Record<string, unknown>;
  settle(answer: McpTaskInputAnswer): void;
}

/**
 * The channel between a running task's handler and its client. Each request of the handler to
 * the client (`ctx.elicit`, `sample`, `listRoots`) is written to the task's row as an input
 * request (the task is `input_required` while any is outstanding); the client answers through
 * `tasks/update` (2026-07-28) or on the stream of a `tasks/result` (2025-11-25), on any replica,
 * and the answer reaches the worker running the handler here or on the mount's `tasks` channel.
 */
@Injectable()
export class McpTaskInputChannel {
  private readonly logger: Logger;
  /** The input requests of the tasks running here, by task id then key. */
  private readonly asking = new Map<string, Map<string, InputWaiter>>();
  /** The last row write of each task's input requests: writes of one task happen in order. */
  private readonly inputWrites = new Map<string, Promise<void>>();

  constructor(
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
    private readonly transitions: McpTaskTransitions,
    private readonly mountBus: McpMountBus,
  ) {
    this.logger = new Logger(`McpTaskInputChannel:${options.mount}`);
  }

  /** The `client` of one run of a task's handler: its requests become the task's input requests. */
  clientOf(record: McpTaskRecord, signal: AbortSignal): NonNullable<McpDeliveryContext['client']> {
    const counter = { n: 0, unnamed: 0 };
    return { request: (method, params, options) => this.ask(record, counter, method, params, options, signal) };
  }

  /**
   * Hands the answer to input request `key` of a task to the handler waiting for it: here, or on
   * the task channel for the replica that runs it.
   */
  async answer(id: string, key: string, answer: McpTaskInputAnswer): Promise<void> {
    if (this.settleHere(id, key, answer)) return;
    if (this.mountBus.distributed) await this.mountBus.publish('tasks', { t: 'i', id, key, ...answer });
  }

  /** Settles input request `key` of a task whose handler waits here; false when none does. */
  settleHere(id: string, key: string, answer: McpTaskInputAnswer): boolean {
    const waiter = this.asking.get(id)?.get(key);
    if (!waiter) return false;
    waiter.settle(answer);
    return true;
  }

  /**
   * 2025-11-25: the outstanding input requests of a task, sent to the client on the stream of its
   * `tasks/result` (each once per call, with the related-task `_meta`). The client's answer comes
   * back on any replica and goes to the waiting handler; a request the client never answers is the
   * handler's deadline to keep, not this call's.
   */
  forward(record: McpTaskRecord, context: McpDeliveryContext, forwarded: Set<string>): void {
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
          (result) => this.answer(record.id, key, { result }),
          (error: unknown) => {
            if (error instanceof McpClientRequestError)
              return this.answer(record.id, key, {
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

  /**
   * One request of a task's handler to the client. Rejects like outside tasks:
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
    const answer = new Promise<McpTaskInputAnswer>((resolve, reject) => {
      pending.set(key, { method, params, settle: resolve });
      timer = setTimeout(() => reject(new McpClientRequestTimeoutError(method, timeoutMs)), timeoutMs);
      onAbort = () => reject(signal.reason ?? new Error('The task was cancelled'));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    let settled: McpTaskInputAnswer;
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

  /** Writes the task's outstanding input requests to its row, in order per task. */
  private writeInputs(id: string): Promise<void> {
    const write = () => {
      const pending = this.asking.get(id);
      const requests = pending?.size
        ? Object.fromEntries(
            [...pending].map(([key, waiter]) => [key, { method: waiter.method, params: waiter.params }]),
          )
        : null;
      return this.transitions.setInputRequests(id, requests);
    };
    const next = (this.inputWrites.get(id) ?? Promise.resolve()).then(write, write);
    const tracked = next.finally(() => {
      if (this.inputWrites.get(id) === tracked) this.inputWrites.delete(id);
    });
    this.inputWrites.set(id, tracked);
    return next;
  }
}

/** The outstanding input requests a task's row holds (none unless it is `input_required`). */
export function inputRequestsOf(record: McpTaskRecord): McpTaskInputRequests {
  if (record.status !== 'input_required') return {};
  const requests = record.outcome?.inputRequests;
  return requests && typeof requests === 'object' ? (requests as McpTaskInputRequests) : {};
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
