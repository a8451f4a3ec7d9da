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
