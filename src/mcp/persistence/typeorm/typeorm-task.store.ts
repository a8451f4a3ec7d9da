import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, IsNull, Not, type Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { TERMINAL_TASK_STATUSES } from '../../protocol/tasks';
import { DEFAULT_DATABASE_TIMEOUT_MS, withDatabaseOutage } from '../database-deadline';
import { McpTask } from '../entities/task.entity';
import type { McpStoreSettings } from '../interfaces/mcp-store-settings.interface';
import type { McpNewTask, McpTaskRecord, McpTaskStore } from '../interfaces/mcp-task-store.interface';
import { InjectMcpStoreSettings } from '../mcp-persistence.constants';
import { newTaskRecord } from '../new-records';

const OPEN = Not(In([...TERMINAL_TASK_STATUSES]));
/** The drivers that take an array parameter; the other supported database is SQLite (`json_each`). */
const POSTGRES_TYPES = new Set(['postgres', 'cockroachdb', 'aurora-postgres']);

/**
 * The tasks of one mount, in `mcp_tasks`. Claims, messages and terminal moves are single
 * conditional UPDATEs (`WHERE status` is not terminal, and for a claim `worker` is the expected
 * one): the row itself decides which of two racing replicas wins.
 */
@Injectable()
export class TypeOrmTaskStore implements McpTaskStore {
  constructor(
    @InjectRepository(McpTask) private readonly tasks: Repository<McpTask>,
    @InjectMcpStoreSettings() private readonly settings: McpStoreSettings,
  ) {}

  /** Bounded by the mount's `database.timeoutMs`; a database that is away rejects with `McpDatabaseUnavailableError`. */
  private bounded<T>(work: Promise<T>, operation: string): Promise<T> {
    return withDatabaseOutage(work, this.settings.databaseTimeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS, operation);
  }

  /** @inheritdoc */
  async create(task: McpNewTask, now = new Date()): Promise<McpTaskRecord> {
    const record = newTaskRecord(this.settings.mount, task, now);
    await this.bounded(this.tasks.insert(record as unknown as QueryDeepPartialEntity<McpTask>), 'task insert');
    return record;
  }

  /** @inheritdoc */
  async get(id: string): Promise<McpTaskRecord | null> {
    return this.bounded(this.tasks.findOne({ where: { id, mount: this.settings.mount } }), 'task read');
  }

  /** @inheritdoc */
  async list(
    principalKey: string,
    now: Date,
    offset: number,
    limit: number,
    sessionId?: string,
  ): Promise<McpTaskRecord[]> {
    const query = this.tasks
      .createQueryBuilder('task')
      .where('task.mount = :mount AND task.principalKey = :principalKey', { mount: this.settings.mount, principalKey })
      .andWhere('(task.expiresAt IS NULL OR task.expiresAt > :now)', { now });
    if (sessionId !== undefined) query.andWhere('task.sessionId = :sessionId', { sessionId });
    query.orderBy('task.createdAt', 'DESC').addOrderBy('task.id', 'ASC').skip(offset).take(limit);
    return this.bounded(query.getMany(), 'task list');
  }

  /** @inheritdoc */
  async getMany(ids: readonly string[], principalKey: string): Promise<McpTaskRecord[]> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return [];
    const query = this.tasks
      .createQueryBuilder('task')
      .where('task.mount = :mount AND task.principalKey = :principalKey', { mount: this.settings.mount, principalKey });
    // The ids travel as one parameter: an IN list of one parameter per id would hit the
    // driver's parameter limit (65535 on PostgreSQL, 32766 on SQLite) long before the body cap.
    // `connection`, not `dataSource`: TypeORM 0.3's EntityManager has only the former.
    if (POSTGRES_TYPES.has(String(this.tasks.manager.connection.options.type)))
      query.andWhere('task.id = ANY(:ids)', { ids: unique });
    else query.andWhere('task.id IN (SELECT value FROM json_each(:ids))', { ids: JSON.stringify(unique) });
    return this.bounded(query.getMany(), 'task read');
  }

  /** @inheritdoc */
  async countOpen(principalKey: string, now: Date): Promise<number> {
    const query = this.tasks
      .createQueryBuilder('task')
      .where('task.mount = :mount AND task.principalKey = :principalKey', { mount: this.settings.mount, principalKey })
      .andWhere('task.status NOT IN (:...terminal)', { terminal: [...TERMINAL_TASK_STATUSES] })
      .andWhere('(task.expiresAt IS NULL OR task.expiresAt > :now)', { now });
    return this.bounded(query.getCount(), 'task count');
  }

  /** @inheritdoc */
  async claim(id: string, worker: string, previous: string | null, now = new Date()): Promise<boolean> {
    const result = await this.bounded(
      this.tasks
        .createQueryBuilder()
        .update()
        .set({ worker, startedAt: now, updatedAt: now, attempt: () => 'attempt + 1' })
        .where({ id, mount: this.settings.mount, status: 'working', worker: previous === null ? IsNull() : previous })
        .execute(),
      'task claim',
    );
    return (result.affected ?? 0) === 1;
  }

  /** @inheritdoc */
  async setMessage(id: string, statusMessage: string | null, now = new Date()): Promise<McpTaskRecord | null> {
    const result = await this.bounded(
      this.tasks.update({ id, mount: this.settings.mount, status: OPEN }, { statusMessage, updatedAt: now }),
      'task message',
    );
    return (result.affected ?? 0) === 1 ? this.get(id) : null;
  }

  /** @inheritdoc */
  async finish(
    id: string,
    status: string,
    statusMessage: string | undefined,
    outcome: Record<string, unknown> | null,
    now = new Date(),
  ): Promise<McpTaskRecord | null> {
    const result = await this.bounded(
      this.tasks.update({ id, mount: this.settings.mount, status: OPEN }, {
        status,
        ...(statusMessage !== undefined ? { statusMessage } : {}),
        outcome,
        updatedAt: now,
      } as QueryDeepPartialEntity<McpTask>),
      'task finish',
    );
    return (result.affected ?? 0) === 1 ? this.get(id) : null;
  }

  /** @inheritdoc */
  async setInputRequests(
    id: string,
    inputRequests: Record<string, unknown> | null,
    now = new Date(),
  ): Promise<McpTaskRecord | null> {
    const asking = !!inputRequests && Object.keys(inputRequests).length > 0;
    const change = {
      status: asking ? 'input_required' : 'working',
      outcome: asking ? { inputRequests } : null,
      updatedAt: now,
    };
    const result = await this.bounded(
      this.tasks.update({ id, mount: this.settings.mount, status: OPEN }, change as QueryDeepPartialEntity<McpTask>),
      'task input',
    );
    return (result.affected ?? 0) === 1 ? this.get(id) : null;
  }

  /** @inheritdoc */
  async unfinished(): Promise<McpTaskRecord[]> {
    return this.bounded(this.tasks.find({ where: { mount: this.settings.mount, status: OPEN } }), 'task sweep');
  }
}
