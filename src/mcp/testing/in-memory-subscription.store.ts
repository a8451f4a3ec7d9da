import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { McpConfigurationError } from '../errors/mcp-configuration.errors';
import type {
  McpResourceSubscriber,
  McpSubscriptionRecord,
  McpSubscriptionStore,
} from '../persistence/interfaces/mcp-subscription-store.interface';
import { InjectMcpSessionStore } from '../persistence/mcp-persistence.constants';
import { InMemoryMcpSessionStore } from './in-memory-session.store';

/**
 * Resource subscriptions of one mount in process memory, for tests. Same rules as the TypeORM
 * store: subscribing twice is one subscription, and sessions that ended (terminated or idle)
 * are not subscribers. Liveness comes from the mount's `InMemoryMcpSessionStore`, so use the two
 * together (as a class in `stores`, it injects the mount's session store).
 */
@Injectable()
export class InMemoryMcpSubscriptionStore implements McpSubscriptionStore {
  private readonly records: McpSubscriptionRecord[] = [];

  constructor(@InjectMcpSessionStore() private readonly sessions: InMemoryMcpSessionStore) {
    if (!(sessions instanceof InMemoryMcpSessionStore)) {
      throw new McpConfigurationError(
        'InMemoryMcpSubscriptionStore needs the InMemoryMcpSessionStore of its mount as the session store',
      );
    }
  }

  /** Every subscription held (copies, oldest first), those of ended sessions included. */
  get subscriptions(): McpSubscriptionRecord[] {
    return this.records.map((record) => ({ ...record }));
  }

  /** Records that `sessionId` watches `uri` (idempotent). */
  async subscribe(sessionId: string, uri: string): Promise<void> {
    // One subscription per (session, uri), whatever the mount: the TypeORM table's unique key.
    if (this.records.some((record) => record.sessionId === sessionId && record.uri === uri)) return;
    this.records.push({ id: randomUUID(), mount: this.sessions.settings.mount, sessionId, uri, createdAt: new Date() });
  }

  /** Forgets that `sessionId` watches `uri` (idempotent). */
  async unsubscribe(sessionId: string, uri: string): Promise<void> {
    const index = this.records.findIndex(
      (record) => record.mount === this.sessions.settings.mount && record.sessionId === sessionId && record.uri === uri,
    );
    if (index >= 0) this.records.splice(index, 1);
  }

  /** How many URIs other than `exceptUri` the session watches on this mount. */
  async countForSession(sessionId: string, exceptUri?: string): Promise<number> {
    return this.records.filter(
      (record) =>
        record.mount === this.sessions.settings.mount && record.sessionId === sessionId && record.uri !== exceptUri,
    ).length;
  }

  /** The live sessions of this mount watching `uri`, sorted by session id (each appears once: one subscription per session and URI). */
  async subscribers(uri: string): Promise<string[]> {
    return (await this.subscriberSessions(uri)).map((subscriber) => subscriber.sessionId);
  }

  /** The live sessions of this mount watching `uri` with their principal keys, sorted by session id. */
  async subscriberSessions(uri: string): Promise<McpResourceSubscriber[]> {
    const now = Date.now();
    const principalKeys = new Map(this.sessions.sessions.map((session) => [session.sessionId, session.principalKey]));
    return this.records
      .filter(
        (record) =>
          record.mount === this.sessions.settings.mount &&
          record.uri === uri &&
          this.sessions.isLive(record.sessionId, now),
      )
      .map((record) => ({ sessionId: record.sessionId, principalKey: principalKeys.get(record.sessionId) as string }))
      .sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1));
  }
}
