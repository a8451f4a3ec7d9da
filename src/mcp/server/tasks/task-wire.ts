import { createHash } from 'node:crypto';
import type { McpTaskRecord } from '../../persistence/interfaces/mcp-task-store.interface';

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
