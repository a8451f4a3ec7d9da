import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type {
  McpOutboundSessionRecord,
  McpOutboundSessionState,
  McpOutboundSessionStore,
} from '../persistence/interfaces/mcp-outbound-session-store.interface';

/**
 * The client's remote sessions in process memory, for tests. Same rules as the TypeORM store:
 * one record per (server, scope key); saving replaces it atomically (keeping its id, and the
 * stored server info, capabilities and endpoint where the new state has none) and reopens a
 * closed one; closing keeps the record.
 */
@Injectable()
export class InMemoryMcpOutboundSessionStore implements McpOutboundSessionStore {
  private readonly records = new Map<string, McpOutboundSessionRecord>();

  /** Every record, closed ones included (copies, oldest first). */
  get sessions(): McpOutboundSessionRecord[] {
    return [...this.records.values()].map((record) => ({ ...record }));
  }

  /** The open session of a server and scope, or null. */
  async find(server: string, scopeKey: string): Promise<McpOutboundSessionRecord | null> {
    const record = this.records.get(this.key(server, scopeKey));
    return record && !record.closedAt ? { ...record } : null;
  }

  /** The most recently updated open session of a server at an endpoint, by any scope key, or null. */
  async findVersion(server: string, endpoint: string): Promise<McpOutboundSessionRecord | null> {
    let newest: McpOutboundSessionRecord | null = null;
    for (const record of this.records.values()) {
      if (record.server !== server || record.endpoint !== endpoint || record.closedAt) continue;
      if (!newest || record.updatedAt.getTime() > newest.updatedAt.getTime()) newest = record;
    }
    return newest ? { ...newest } : null;
  }

  /** Inserts or replaces the session of a server and scope; returns its id. */
  async save(server: string, scopeKey: string, state: McpOutboundSessionState): Promise<string> {
    const key = this.key(server, scopeKey);
    const now = new Date();
    const existing = this.records.get(key);
    const record: McpOutboundSessionRecord = {
      id: existing?.id ?? randomUUID(),
      server,
      scopeKey,
      remoteSessionId: state.remoteSessionId,
      protocolVersion: state.protocolVersion,
      serverInfo: state.serverInfo ?? existing?.serverInfo ?? null,
      serverCapabilities: state.serverCapabilities ?? existing?.serverCapabilities ?? null,
      endpoint: state.endpoint ?? existing?.endpoint ?? null,
      createdAt: existing && !existing.closedAt ? existing.createdAt : now,
      updatedAt: now,
      closedAt: null,
    };
    this.records.set(key, record);
    return record.id;
  }

  /** Marks the open session of a server and scope closed. */
  async close(server: string, scopeKey: string): Promise<void> {
    const record = this.records.get(this.key(server, scopeKey));
    if (record && !record.closedAt) {
      const now = new Date();
      record.closedAt = now;
      record.updatedAt = now;
    }
  }

  private key(server: string, scopeKey: string): string {
    return JSON.stringify([server, scopeKey]);
  }
}
