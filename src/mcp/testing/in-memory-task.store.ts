import { Injectable, Optional } from '@nestjs/common';
import { DEFAULT_MOUNT } from '../mcp.constants';
import type { McpStoreSettings } from '../persistence/interfaces/mcp-store-settings.interface';
import type { McpNewTask, McpTaskRecord, McpTaskStore } from '../persistence/interfaces/mcp-task-store.interface';
import { InjectMcpStoreSettings } from '../persistence/mcp-persistence.constants';
import { newTaskRecord } from '../persistence/new-records';
import { isTerminalTaskStatus } from '../protocol/tasks';

/**
 * The tasks of one mount in process memory, for tests. Same rules as the TypeORM store: claims
 * only from the expected worker, terminal statuses never change. Shared by replicas only when the
 * same instance is given to each.
 */
@Injectable()
export class InMemoryMcpTaskStore implements McpTaskStore {
  /** The mount whose tasks this store holds. */
  readonly mount: string;
  private readonly records = new Map<string, McpTaskRecord>();

  constructor(@Optional() @InjectMcpStoreSettings() settings?: Partial<McpStoreSettings> | null) {
    this.mount = settings?.mount ?? DEFAULT_MOUNT;
  }

  /** Every task held (copies, oldest first). */
  get tasks(): McpTaskRecord[] {
    return [...this.records.values()].map((record) => ({ ...record }));
  }

  /** Stores a new task of this mount and returns its record. */
  async create(task: McpNewTask, now = new Date()): Promise<McpTaskRecord> {
    const record = newTaskRecord(this.mount, task, now);
    this.records.set(record.id, record);
    return { ...record };
  }

  /** The task with this id on this mount, or null. */
  async get(id: string): Promise<McpTaskRecord | null> {
    const record = this.records.get(id);
    return record ? { ...record } : null;
  }

  /** The principal's unexpired tasks at `now` (of one session, when given), newest first, `limit` of them from `offset`. */
  async list(
    principalKey: string,
    now: Date,
    offset: number,
    limit: number,
    sessionId?: string,
  ): Promise<McpTaskRecord[]> {
    return [...this.records.values()]
      .filter(
        (record) =>
          record.principalKey === principalKey &&
          (sessionId === undefined || record.sessionId === sessionId) &&
          !expired(record, now),
      )
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(offset, offset + limit)
      .map((record) => ({ ...record }));
  }

  /** The tasks of `principalKey` among `ids` (unknown ids and other principals' tasks left out). */
  async getMany(ids: readonly string[], principalKey: string): Promise<McpTaskRecord[]> {
    return [...new Set(ids)].flatMap((id) => {
      const record = this.records.get(id);
      return record && record.principalKey === principalKey ? [{ ...record }] : [];
    });
  }

  /** How many tasks of `principalKey` are neither over nor expired at `now`. */
  async countOpen(principalKey: string, now: Date): Promise<number> {
    return [...this.records.values()].filter(
      (record) => record.principalKey === principalKey && !isTerminalTaskStatus(record.status) && !expired(record, now),
    ).length;
  }

  /** Claims a working task for `worker` when its current worker is `previous`; true when the claim won. */
  async claim(id: string, worker: string, previous: string | null, now = new Date()): Promise<boolean> {
    const record = this.records.get(id);
    if (!record || record.status !== 'working' || record.worker !== previous) return false;
    Object.assign(record, { worker, startedAt: now, updatedAt: now, attempt: record.attempt + 1 });
    return true;
  }

  /** Sets the status message of an unfinished task; null when the task is finished or unknown. */
  async setMessage(id: string, statusMessage: string | null, now = new Date()): Promise<McpTaskRecord | null> {
    const record = this.records.get(id);
    if (!record || isTerminalTaskStatus(record.status)) return null;
    Object.assign(record, { statusMessage, updatedAt: now });
    return { ...record };
  }

  /** Moves an unfinished task to a terminal status with its message and outcome; null when it was already finished or is unknown. */
  async finish(
    id: string,
    status: string,
    statusMessage: string | undefined,
    outcome: Record<string, unknown> | null,
    now = new Date(),
  ): Promise<McpTaskRecord | null> {
    const record = this.records.get(id);
    if (!record || isTerminalTaskStatus(record.status)) return null;
    Object.assign(record, {
      status,
      ...(statusMessage !== undefined ? { statusMessage } : {}),
      outcome,
      updatedAt: now,
    });
    return { ...record };
  }

  /** Sets the pending input requests of an unfinished task (`input_required`), or clears them (`working`) with null. */
  async setInputRequests(
    id: string,
    inputRequests: Record<string, unknown> | null,
    now = new Date(),
  ): Promise<McpTaskRecord | null> {
    const record = this.records.get(id);
    if (!record || isTerminalTaskStatus(record.status)) return null;
    const asking = !!inputRequests && Object.keys(inputRequests).length > 0;
    Object.assign(record, {
      status: asking ? 'input_required' : 'working',
      outcome: asking ? { inputRequests: { ...inputRequests } } : null,
      updatedAt: now,
    });
    return { ...record };
  }

  /** The tasks of this mount that are not finished (working or input_required). */
  async unfinished(): Promise<McpTaskRecord[]> {
    return [...this.records.values()]
      .filter((record) => !isTerminalTaskStatus(record.status))
      .map((record) => ({ ...record }));
  }
}

function expired(record: McpTaskRecord, now: Date): boolean {
  return record.expiresAt !== null && record.expiresAt <= now;
}
