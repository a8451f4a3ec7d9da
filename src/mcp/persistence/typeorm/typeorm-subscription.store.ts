import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { Repository } from 'typeorm';
import { MCP_MODULE_OPTIONS } from '../../mcp.constants';
import type { McpResolvedOptions } from '../../server/mcp.options';
import { McpInboundSession } from '../entities/inbound-session.entity';
import { McpResourceSubscription } from '../entities/resource-subscription.entity';

/** The longest URI a session may subscribe to (the column's width). */
export const MAX_SUBSCRIPTION_URI_LENGTH = 2048;

/**
 * Resource subscriptions of one mount, in the database only: any replica records them and any
 * replica finds the subscribers of a URI. Subscribing twice is one row; rows of ended sessions
 * are ignored.
 */
@Injectable()
export class ResourceSubscriptionStore {
  constructor(
    @InjectRepository(McpResourceSubscription) private readonly subscriptions: Repository<McpResourceSubscription>,
    @Inject(MCP_MODULE_OPTIONS) private readonly options: McpResolvedOptions,
  ) {}

  /** Records that `sessionId` watches `uri` (idempotent). */
  async subscribe(sessionId: string, uri: string): Promise<void> {
    await this.subscriptions
      .createQueryBuilder()
      .insert()
      .values({ id: randomUUID(), mount: this.options.mount, sessionId, uri, createdAt: new Date() })
      .orIgnore()
      .execute();
  }

  /** Forgets that `sessionId` watches `uri` (idempotent). */
  async unsubscribe(sessionId: string, uri: string): Promise<void> {
    await this.subscriptions.delete({ mount: this.options.mount, sessionId, uri });
  }

  /** The live (not terminated, not idle) sessions of this mount watching `uri`. */
  async subscribers(uri: string): Promise<string[]> {
    const idleSince = new Date(Date.now() - this.options.sessions.idleTtlMs);
    const rows: { sessionId: string }[] = await this.subscriptions
      .createQueryBuilder('s')
      .select('s.sessionId', 'sessionId')
      .innerJoin(McpInboundSession, 'i', 'i.sessionId = s.sessionId AND i.mount = s.mount')
      .where('s.mount = :mount AND s.uri = :uri', { mount: this.options.mount, uri })
      .andWhere('i.terminatedAt IS NULL AND i.lastSeenAt >= :idleSince', { idleSince })
      .orderBy('s.sessionId')
      .getRawMany();
    return rows.map((row) => row.sessionId);
  }
}
