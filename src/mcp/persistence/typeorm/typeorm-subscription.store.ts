import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { Not, type Repository } from 'typeorm';
import { McpInboundSession } from '../entities/inbound-session.entity';
import { McpResourceSubscription } from '../entities/resource-subscription.entity';
import type { McpStoreSettings } from '../interfaces/mcp-store-settings.interface';
import type { McpResourceSubscriber, McpSubscriptionStore } from '../interfaces/mcp-subscription-store.interface';
import { InjectMcpStoreSettings } from '../mcp-persistence.constants';
import { DEFAULT_DATABASE_TIMEOUT_MS, withDatabaseDeadline } from '../database-deadline';
import { sessionIdleCutoff } from '../session-liveness';

/**
 * Resource subscriptions of one mount, in the database only: any replica records them and any
 * replica finds the subscribers of a URI. Subscribing twice is one row; rows of ended sessions
 * are ignored.
 */
@Injectable()
export class TypeOrmSubscriptionStore implements McpSubscriptionStore {
  constructor(
    @InjectRepository(McpResourceSubscription) private readonly subscriptions: Repository<McpResourceSubscription>,
    @InjectMcpStoreSettings() private readonly settings: McpStoreSettings,
  ) {}

  /** Every operation is bounded by the mount's `database.timeoutMs`. */
  private bounded<T>(work: Promise<T>, operation: string): Promise<T> {
    return withDatabaseDeadline(work, this.settings.databaseTimeoutMs ?? DEFAULT_DATABASE_TIMEOUT_MS, operation);
  }

  /** Records that `sessionId` watches `uri` (idempotent). */
  async subscribe(sessionId: string, uri: string): Promise<void> {
    await this.bounded(
      this.subscriptions
        .createQueryBuilder()
        .insert()
        .values({ id: randomUUID(), mount: this.settings.mount, sessionId, uri, createdAt: new Date() })
        .orIgnore()
        .execute(),
      'subscription insert',
    );
  }

  /** Forgets that `sessionId` watches `uri` (idempotent). */
  async unsubscribe(sessionId: string, uri: string): Promise<void> {
    await this.bounded(
      this.subscriptions.delete({ mount: this.settings.mount, sessionId, uri }),
      'subscription delete',
    );
  }

  /** How many URIs other than `exceptUri` the session watches on this mount. */
  countForSession(sessionId: string, exceptUri?: string): Promise<number> {
    return this.subscriptions.count({
      where: { mount: this.settings.mount, sessionId, ...(exceptUri === undefined ? {} : { uri: Not(exceptUri) }) },
    });
  }

  /** The live (not terminated, not idle) sessions of this mount watching `uri`. */
  async subscribers(uri: string): Promise<string[]> {
    return (await this.subscriberSessions(uri)).map((row) => row.sessionId);
  }

  /** The live sessions of this mount watching `uri`, with the principal key of each (read from the joined session row). */
  async subscriberSessions(uri: string): Promise<McpResourceSubscriber[]> {
    const rows: McpResourceSubscriber[] = await this.bounded(
      this.subscriptions
        .createQueryBuilder('s')
        .select('s.sessionId', 'sessionId')
        .addSelect('i.principalKey', 'principalKey')
        .innerJoin(McpInboundSession, 'i', 'i.sessionId = s.sessionId AND i.mount = s.mount')
        .where('s.mount = :mount AND s.uri = :uri', { mount: this.settings.mount, uri })
        .andWhere('i.terminatedAt IS NULL AND i.lastSeenAt >= :idleSince', {
          idleSince: sessionIdleCutoff(this.settings.idleTtlMs),
        })
        .orderBy('s.sessionId')
        .getRawMany(),
      'subscription lookup',
    );
    return rows.map((row) => ({ sessionId: row.sessionId, principalKey: row.principalKey }));
  }
}
