import { createHash } from 'node:crypto';
import type { McpTaskRecord } from '../../persistence/interfaces/mcp-task-store.interface';
import { McpMethod } from '../../protocol/mcp-methods';
import { isStatelessVersion } from '../../protocol/stateless';
import { TASK_RESULT_TYPE } from '../../protocol/tasks';

/** A task as the wire carries it (`Task` of 2025-11-25). */
export function toWireTask(record: McpTaskRecord): Record<string, unknown> {
  return {
    taskId: record.id,
    status: record.status,
    ...(record.statusMessage !== null ? { statusMessage: record.statusMessage } : {}),
    createdAt: record.createdAt.toISOString(),
    lastUpdatedAt: record.updatedAt.toISOString(),
    ttl: record.ttlMs,
    pollInterval: record.pollIntervalMs,
  };
}

/** A task as the tasks extension of 2026-07-28 carries it (`Task`: `ttlMs`, `pollIntervalMs`). */
export function toWireTask2026(record: McpTaskRecord): Record<string, unknown> {
  return {
    taskId: record.id,
    status: record.status,
    ...(record.statusMessage !== null ? { statusMessage: record.statusMessage } : {}),
    createdAt: record.createdAt.toISOString(),
    lastUpdatedAt: record.updatedAt.toISOString(),
    ttlMs: record.ttlMs,
    pollIntervalMs: record.pollIntervalMs,
  };
}

/**
 * The `DetailedTask` of 2026-07-28 (what `tasks/get` answers and `notifications/tasks` carries):
 * the task, with `inputRequests` while input_required, `result` once completed and `error` once failed.
 */
export function toDetailedTask(record: McpTaskRecord): Record<string, unknown> {
  const task = toWireTask2026(record);
  const outcome = record.outcome ?? {};
  if (record.status === 'input_required' && 'inputRequests' in outcome)
    return { ...task, inputRequests: outcome.inputRequests };
  if (record.status === 'completed' && 'result' in outcome) return { ...task, result: outcome.result };
  if (record.status === 'failed' && 'error' in outcome) return { ...task, error: outcome.error };
  if (record.status === 'failed' && 'result' in outcome)
    return { ...task, error: { code: -32603, message: record.statusMessage ?? 'The task failed' } };
  return task;
}

/** True when the task's lifetime is over at `now`: it is then served as unknown. */
export function isTaskExpired(record: McpTaskRecord, now = new Date()): boolean {
  return record.expiresAt !== null && record.expiresAt.getTime() <= now.getTime();
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as Record<string, unknown>)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 (hex) of `value` as canonical JSON (object keys sorted): the same arguments give the same digest. */
export function argumentsDigest(value: unknown): string {
  return createHash('sha256').update(canonical(value)).digest('hex');
}

/**
 * What differs between the revisions' tasks: how a task is answered and announced, and the few
 * rules that are not the same. One adapter per revision (`taskWireOf`); the service, the worker
 * and the transitions ask it instead of testing the revision themselves.
 */
export interface McpTaskWire {
  /** The answer to a task-augmented `tools/call`. */
  created(record: McpTaskRecord): Record<string, unknown>;
  /** The answer to `tasks/get`. */
  status(record: McpTaskRecord): Record<string, unknown>;
  /** The status notification of a change; `session` notifications go to the task's session, `listen` ones to the listen streams that agreed to the task. */
  notification(record: McpTaskRecord): { to: 'session' | 'listen'; method: string; params: Record<string, unknown> };
  /** True when a tool result with `isError` ends the task `failed` (else `completed`). */
  readonly failsOnToolError: boolean;
  /** True when `tasks/cancel` acknowledges with `{}`, also for a task already over (else the task, or -32602 once over). */
  readonly acknowledgesCancel: boolean;
  /** True when the revision has `tasks/update` (answers to input requests) and needs the client's tasks extension. */
  readonly isExtension: boolean;
}

/** Tasks of 2025-11-25 (experimental, in the session). */
export const TASK_WIRE_2025: McpTaskWire = {
  created: (record) => ({ task: toWireTask(record) }),
  status: toWireTask,
  notification: (record) => ({ to: 'session', method: McpMethod.TasksStatus, params: toWireTask(record) }),
  failsOnToolError: true,
  acknowledgesCancel: false,
  isExtension: false,
};

/** The `io.modelcontextprotocol/tasks` extension of 2026-07-28 (stateless). */
export const TASK_WIRE_2026: McpTaskWire = {
  created: (record) => ({ resultType: TASK_RESULT_TYPE, ...toWireTask2026(record) }),
  status: toDetailedTask,
  notification: (record) => ({ to: 'listen', method: McpMethod.Tasks, params: toDetailedTask(record) }),
  // The extension keeps `failed` for JSON-RPC errors: a tool error is a completed task.
  failsOnToolError: false,
  // Cancellation is cooperative there: an empty acknowledgment whatever the task's state.
  acknowledgesCancel: true,
  isExtension: true,
};

/** The tasks adapter of a protocol revision. */
export function taskWireOf(protocolVersion: string): McpTaskWire {
  return isStatelessVersion(protocolVersion) ? TASK_WIRE_2026 : TASK_WIRE_2025;
}
