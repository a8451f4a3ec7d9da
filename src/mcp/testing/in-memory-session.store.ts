import { Injectable, Optional } from '@nestjs/common';
import type { McpLogLevel } from '../protocol/log-levels';
import type { McpPrincipal } from '../interfaces/principal.interface';
import { DEFAULT_MOUNT, DEFAULT_SESSION_IDLE_TTL_MS } from '../mcp.constants';
import type {
  McpInboundSessionRecord,
  McpNewInboundSession,
  McpSessionStore,
} from '../persistence/interfaces/mcp-session-store.interface';
import type { McpStoreSettings } from '../persistence/interfaces/mcp-store-settings.interface';
import { InjectMcpStoreSettings } from '../persistence/mcp-persistence.constants';
import { newInboundSessionRecord, storedPrincipalKey } from '../persistence/new-records';
import { isSessionLive } from '../persistence/session-liveness';

/**
 * 2025-era sessions of one mount in process memory, for tests. Same rules as the TypeORM store:
 * a session is found only by its mount, id and principal together, and unknown, terminated,
 * idle and other-principal sessions are all "not found"; ended sessions stay listed in
 * `sessions`. Given as a class in `stores`, it reads the mount and idle TTL of its mount; built
 * by hand, pass them (defaults: mount `'default'`, one hour).
 */
@Injectable()
export class InMemoryMcpSessionStore implements McpSessionStore {
  /** The mount and idle TTL this store applies. */
  readonly settings: McpStoreSettings;
  private readonly records = new Map<string, McpInboundSessionRecord>();

  constructor(@Optional() @InjectMcpStoreSettings() settings?: Partial<McpStoreSettings> | null) {
    this.settings = {
      mount: settings?.mount ?? DEFAULT_MOUNT,
      idleTtlMs: settings?.idleTtlMs ?? DEFAULT_SESSION_IDLE_TTL_MS,
    };
  }

  /** Every session opened so far, ended ones included (copies, oldest first). */
  get sessions(): McpInboundSessionRecord[] {
    return [...this.records.values()].map((record) => ({ ...record }));
  }

  /** Opens a session bound to the mount and the principal. */
  async open(input: McpNewInboundSession): Promise<McpInboundSessionRecord> {
    const record = newInboundSessionRecord(this.settings.mount, input);
    this.records.set(record.sessionId, record);
    return { ...record };
  }

  /** The live session with this id on this mount for this principal, or null; refreshes `lastSeenAt`. */
  async find(sessionId: string, principal: McpPrincipal): Promise<McpInboundSessionRecord | null> {
    const record = this.records.get(sessionId);
    if (
      !record ||
      record.mount !== this.settings.mount ||
      record.principalKey !== storedPrincipalKey(principal.key) ||
      record.terminatedAt
    )
      return null;
    const now = Date.now();
    if (!isSessionLive(record, this.settings.idleTtlMs, now)) {
      record.terminatedAt = new Date(now);
      return null;
    }
    record.lastSeenAt = new Date(now);
    return { ...record };
  }

  /** Stores the log level on the principal's session of this mount. */
  async setLogLevel(sessionId: string, principal: McpPrincipal, level: McpLogLevel): Promise<void> {
    const record = this.records.get(sessionId);
    if (record && record.mount === this.settings.mount && record.principalKey === storedPrincipalKey(principal.key))
      record.logLevel = level;
  }

  /** Ends a session; the record stays listed. */
  async terminate(session: McpInboundSessionRecord): Promise<void> {
    const record = [...this.records.values()].find((candidate) => candidate.id === session.id);
    if (record) record.terminatedAt = new Date();
  }

  /** Live sessions of the principal on this mount. */
  async countOpen(principal: McpPrincipal): Promise<number> {
    const now = Date.now();
    let open = 0;
    for (const record of this.records.values()) {
      if (
        record.mount === this.settings.mount &&
        record.principalKey === storedPrincipalKey(principal.key) &&
        isSessionLive(record, this.settings.idleTtlMs, now)
      )
        open += 1;
    }
    return open;
  }

  /** Whether `sessionId` is a live session of this mount, whoever owns it (what subscriptions need). */
  isLive(sessionId: string, now: number = Date.now()): boolean {
    const record = this.records.get(sessionId);
    return !!record && record.mount === this.settings.mount && isSessionLive(record, this.settings.idleTtlMs, now);
  }
}
