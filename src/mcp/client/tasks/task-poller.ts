import { setTimeout as delay } from 'node:timers/promises';
import { McpProtocolError, McpTimeoutError } from '../../errors/mcp-client.errors';
import { isTerminalTaskStatus } from '../../protocol/tasks';
import type { McpCallJob } from '../interfaces/mcp-call.interface';
import { McpCallAbortedError, abortReasonText } from '../mcp-call-aborted.errors';

/** The shortest wait between two `tasks/get`, whatever the server asks. */
export const MIN_TASK_POLL_MS = 100;
/** The longest wait between two `tasks/get`, whatever the server asks. */
export const MAX_TASK_POLL_MS = 10_000;
/** The wait between two `tasks/get` when the server names no poll interval. */
export const DEFAULT_TASK_POLL_MS = 1000;

/** How one revision asks about a task and cancels it. */
export interface McpTaskPolling {
  job: McpCallJob;
  taskId: string;
  /** The caller's abort signal: once it fires the task is cancelled. */
  signal?: AbortSignal;
  /** Sends `tasks/get`; resolves to the task. */
  get(): Promise<Record<string, unknown>>;
  /** Sends `tasks/cancel`. */
  cancel(): Promise<void>;
  /**
   * Called with each `input_required` answer of `tasks/get`: gives the task the client's answers
   * to its input requests (the client's handlers). Polling goes on once it resolves; a rejection
   * ends the polling with that error.
   */
  onInputRequired?(task: Record<string, unknown>): Promise<void>;
}

/** The task a task-creating answer carries: `{ task }` (2025-11-25), or the task inline (2026-07-28). */
export function createdTask(server: string, result: Record<string, unknown>): Record<string, unknown> {
  const task = result.task && typeof result.task === 'object' ? (result.task as Record<string, unknown>) : result;
  if (typeof task.taskId !== 'string' || !task.taskId) {
    throw new McpProtocolError(
      `MCP server "${server}" answered a task-augmented tools/call with a task without a taskId`,
      true,
    );
  }
  return task;
}

/** True when a 2025-11-25 `tools/call` answer is a `CreateTaskResult` rather than the tool's result. */
export function isCreateTaskResult(result: Record<string, unknown>): boolean {
  const task = result.task as Record<string, unknown> | undefined;
  return !!task && typeof task === 'object' && typeof task.taskId === 'string' && !('content' in result);
}

/** How long to wait before the next `tasks/get`: the server's `pollInterval` (`pollIntervalMs` on 2026-07-28), bounded. */
export function pollDelay(task: Record<string, unknown>): number {
  const asked = typeof task.pollIntervalMs === 'number' ? task.pollIntervalMs : task.pollInterval;
  if (typeof asked !== 'number' || !Number.isFinite(asked)) return DEFAULT_TASK_POLL_MS;
  return Math.min(MAX_TASK_POLL_MS, Math.max(MIN_TASK_POLL_MS, asked));
}

/**
 * Polls a task with `tasks/get` until its status is terminal and resolves to that last answer.
 * The call's deadline bounds the polling: past it the task is cancelled and the call fails with
 * `McpTimeoutError`; the caller's abort cancels it and fails with `McpCallAbortedError`. Both
 * were delivered: the server had the task. A failed `tasks/cancel` does not change the error.
 * An `input_required` task is handed to `onInputRequired` (when given) before the next wait.
 */
export async function pollTask(polling: McpTaskPolling): Promise<Record<string, unknown>> {
  const { job, signal } = polling;
  for (;;) {
    if (signal?.aborted)
      return stop(polling, new McpCallAbortedError(job.server, job.method, true, abortReasonText(signal.reason)));
    if (job.deadlineAt !== undefined && Date.now() >= job.deadlineAt) {
      return stop(
        polling,
        new McpTimeoutError(
          `MCP server "${job.server}": task ${polling.taskId} was still running at the call's deadline of ${job.timeoutMs} ms; it was cancelled`,
          true,
          job.timeoutMs,
        ),
      );
    }
    const task = await polling.get();
    if (isTerminalTaskStatus(String(task.status))) return task;
    if (task.status === 'input_required' && polling.onInputRequired) {
      await polling.onInputRequired(task);
      if (signal?.aborted) continue; // cancelled while answering: the next turn sends tasks/cancel
    }
    const remaining = job.deadlineAt === undefined ? Infinity : Math.max(0, job.deadlineAt - Date.now());
    await delay(Math.min(pollDelay(task), remaining), undefined, signal ? { signal } : {}).catch(() => undefined);
  }
}

async function stop(polling: McpTaskPolling, error: Error): Promise<never> {
  await polling.cancel().catch(() => undefined);
  throw error;
}
