import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { In, type Repository } from 'typeorm';
import { DEFAULT_DATABASE_TIMEOUT_MS, withDatabaseOutage } from '../database-deadline';
import { McpHandlerSwitch } from '../entities/handler-switch.entity';
import type { McpHandlerSwitchRecord, McpHandlerSwitchStore } from '../interfaces/mcp-handler-switch-store.interface';
import type { McpStoreSettings } from '../interfaces/mcp-store-settings.interface';
import { InjectMcpStoreSettings } from '../mcp-persistence.constants';
import { newHandlerSwitchRecords, storedHandlerName, storedPrincipalKey } from '../new-records';

/** The `principal_key` of a switch for everyone. */
const EVERYONE = '';

/**
 * The `McpRegistry` switches of one mount, in `mcp_handler_switches`. Turning off is one
 * INSERT that ignores rows already there; turning on is one DELETE, so two replicas switching
 * the same handler at once never resurrect or lose each other's rows.
 */
@Injectable()
export class TypeOrmHandlerSwitchStore implements McpHandlerSwitchStore {
  constructor(
    @InjectRepository(McpHandlerSwitch) private readonly switches: Repository<McpHandlerSwitch>,
    @InjectMcpStoreSettings() private readonly settings: McpStoreSettings,
  ) {}

  /**
   * Every operation is bounded by the mount's `database.timeoutMs`; a database that is away
   * (refused, dropped, stalled) rejects with `McpDatabaseUnavailableError` too.
   */
  private bounded<T>(work: Promise<T>, operation: string): Promise<T> {
    return withDatabaseOutage(work, this.settings.databaseTimeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS, operation);
  }

  /** Every switch of this mount. */
  async list(): Promise<McpHandlerSwitchRecord[]> {
    const rows = await this.bounded(
      this.switches.find({ where: { mount: this.settings.mount } }),
      'handler switch list',
    );
    return rows.map((row) => ({
      mount: row.mount,
      kind: row.kind,
      name: row.name,
      principalKey: row.principalKey === EVERYONE ? null : row.principalKey,
      createdAt: row.createdAt,
    }));
  }

  /** Turns a handler off for `principalKeys`, or for everyone when null (one INSERT; rows already there stay). */
  async disable(kind: string, name: string, principalKeys: readonly string[] | null): Promise<void> {
    const records = newHandlerSwitchRecords(this.settings.mount, kind, name, principalKeys);
    if (!records.length) return;
    await this.bounded(
      this.switches
        .createQueryBuilder()
        .insert()
        .values(
          records.map((record) => ({ id: randomUUID(), ...record, principalKey: record.principalKey ?? EVERYONE })),
        )
        .orIgnore()
        .execute(),
      'handler switch insert',
    );
  }

  /** Lifts the switches of `principalKeys`, or with null every switch of the handler (one DELETE). */
  async enable(kind: string, name: string, principalKeys: readonly string[] | null): Promise<void> {
    if (principalKeys?.length === 0) return;
    const handler = { mount: this.settings.mount, kind, name: storedHandlerName(name) };
    const where =
      principalKeys === null
        ? handler
        : { ...handler, principalKey: In([...new Set(principalKeys.map(storedPrincipalKey))]) };
    await this.bounded(this.switches.delete(where), 'handler switch delete');
  }
}
