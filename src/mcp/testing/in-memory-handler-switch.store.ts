import { Injectable, Optional } from '@nestjs/common';
import { DEFAULT_MOUNT } from '../mcp.constants';
import type {
  McpHandlerSwitchRecord,
  McpHandlerSwitchStore,
} from '../persistence/interfaces/mcp-handler-switch-store.interface';
import type { McpStoreSettings } from '../persistence/interfaces/mcp-store-settings.interface';
import { InjectMcpStoreSettings } from '../persistence/mcp-persistence.constants';
import { newHandlerSwitchRecords, storedHandlerName, storedPrincipalKey } from '../persistence/new-records';

/**
 * The `McpRegistry` switches of one mount in process memory, for tests. Same rules as the
 * TypeORM store: one switch per handler and principal (or everyone), names and principal keys
 * in their stored form, and enabling without principals lifts every switch of the handler.
 * Shared by replicas only when the same instance is given to each.
 */
@Injectable()
export class InMemoryMcpHandlerSwitchStore implements McpHandlerSwitchStore {
  /** The mount whose switches this store holds. */
  readonly mount: string;
  private readonly records: McpHandlerSwitchRecord[] = [];

  constructor(@Optional() @InjectMcpStoreSettings() settings?: Partial<McpStoreSettings> | null) {
    this.mount = settings?.mount ?? DEFAULT_MOUNT;
  }

  /** Every switch held (copies, oldest first). */
  get switches(): McpHandlerSwitchRecord[] {
    return this.records.map((record) => ({ ...record }));
  }

  /** Every switch of this mount. */
  async list(): Promise<McpHandlerSwitchRecord[]> {
    return this.switches;
  }

  /** Turns a handler off for `principalKeys`, or for everyone when null; a switch already there stays as it is. */
  async disable(kind: string, name: string, principalKeys: readonly string[] | null): Promise<void> {
    for (const record of newHandlerSwitchRecords(this.mount, kind, name, principalKeys)) {
      const held = this.records.some(
        (r) => r.kind === record.kind && r.name === record.name && r.principalKey === record.principalKey,
      );
      if (!held) this.records.push(record);
    }
  }

  /** Lifts the switches of `principalKeys`, or with null every switch of the handler. */
  async enable(kind: string, name: string, principalKeys: readonly string[] | null): Promise<void> {
    const storedName = storedHandlerName(name);
    const keys = principalKeys === null ? null : new Set(principalKeys.map(storedPrincipalKey));
    for (let index = this.records.length - 1; index >= 0; index--) {
      const record = this.records[index];
      if (record.kind !== kind || record.name !== storedName) continue;
      if (keys === null || (record.principalKey !== null && keys.has(record.principalKey)))
        this.records.splice(index, 1);
    }
  }
}
