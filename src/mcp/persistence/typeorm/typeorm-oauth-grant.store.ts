import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { Brackets, type Repository } from 'typeorm';
import { DEFAULT_DATABASE_TIMEOUT_MS, withDatabaseDeadline } from '../database-deadline';
import { McpOAuthAuthorization } from '../entities/oauth-authorization.entity';
import { McpOAuthGrant } from '../entities/oauth-grant.entity';
import { storedPrincipalKey } from '../new-records';

/** The fields of a grant its holder writes (the rest is the store's bookkeeping). */
export type McpOAuthGrantValues = Pick<
  McpOAuthGrant,
  'issuer' | 'clientId' | 'resource' | 'scope' | 'accessToken' | 'refreshToken' | 'expiresAt'
>;

/**
 * The grants and pending authorizations of `authorizationCode`, in `mcp_oauth_grants` and
 * `mcp_oauth_authorizations`. Values arrive sealed; the store never sees a token in clear. The
 * refresh of a grant is leased with a conditional update (any database, any replica): only the
 * process whose update matched refreshes, the others wait for the row's `version` to grow.
 */
@Injectable()
export class TypeOrmOAuthGrantStore {
  constructor(
    @InjectRepository(McpOAuthGrant) private readonly grants: Repository<McpOAuthGrant>,
    @InjectRepository(McpOAuthAuthorization) private readonly authorizations: Repository<McpOAuthAuthorization>,
  ) {}

  private bounded<T>(work: Promise<T>, operation: string): Promise<T> {
    return withDatabaseDeadline(work, DEFAULT_DATABASE_TIMEOUT_MS, operation);
  }

  /** The grant of a server and scope key, or null. */
  find(server: string, scopeKey: string): Promise<McpOAuthGrant | null> {
    return this.bounded(
      this.grants.findOne({ where: { server, scopeKey: storedPrincipalKey(scopeKey) } }),
      'OAuth grant lookup',
    );
  }

  /** Keeps the tokens a user just granted, replacing an older grant of the same server and scope key. */
  async save(server: string, scopeKey: string, values: McpOAuthGrantValues): Promise<void> {
    const now = new Date();
    const stored = storedPrincipalKey(scopeKey);
    await this.bounded(
      this.grants.manager.transaction(async (manager) => {
        const repository = manager.getRepository(McpOAuthGrant);
        const existing = await repository.findOne({ where: { server, scopeKey: stored } });
        if (existing) {
          await repository.update(
            { id: existing.id },
            { ...values, wantedScope: null, refreshingUntil: null, version: existing.version + 1, updatedAt: now },
          );
        } else {
          await repository.insert({
            id: randomUUID(),
            server,
            scopeKey: stored,
            ...values,
            wantedScope: null,
            refreshingUntil: null,
            version: 1,
            createdAt: now,
            updatedAt: now,
          });
        }
      }),
      'OAuth grant save',
    );
  }

  /**
   * Takes the refresh lease of the grant at `version` until `until`: true for exactly one
   * caller while the lease runs, false when the row moved on or another process holds it.
   */
  async lease(grant: McpOAuthGrant, until: Date): Promise<boolean> {
    const now = new Date();
    const result = await this.bounded(
      this.grants
        .createQueryBuilder()
        .update(McpOAuthGrant)
        .set({ refreshingUntil: until })
        .where('id = :id AND version = :version', { id: grant.id, version: grant.version })
        .andWhere(
          new Brackets((qb) => qb.where('refreshing_until IS NULL').orWhere('refreshing_until < :now', { now })),
        )
        .execute(),
      'OAuth grant lease',
    );
    return (result.affected ?? 0) === 1;
  }

  /** Writes refreshed tokens of the grant at `version` and ends the lease: false when the row moved on meanwhile. */
  async refreshed(grant: McpOAuthGrant, values: Partial<McpOAuthGrantValues>): Promise<boolean> {
    return this.change(grant, { ...values, refreshingUntil: null }, 'OAuth grant refresh');
  }

  /** Marks the access token of the grant at `version` as expired, so the next call refreshes it. */
  expire(grant: McpOAuthGrant): Promise<boolean> {
    return this.change(grant, { expiresAt: new Date(0) }, 'OAuth grant expiry');
  }

  /** Records scopes a server asked for beyond the grant, for the next authorization. */
  want(grant: McpOAuthGrant, wantedScope: string): Promise<boolean> {
    return this.change(grant, { wantedScope }, 'OAuth grant step-up');
  }

  private async change(grant: McpOAuthGrant, set: Partial<McpOAuthGrant>, operation: string): Promise<boolean> {
    const result = await this.bounded(
      this.grants
        .createQueryBuilder()
        .update(McpOAuthGrant)
        .set({ ...set, version: grant.version + 1, updatedAt: new Date() })
        .where('id = :id AND version = :version', { id: grant.id, version: grant.version })
        .execute(),
      operation,
    );
    return (result.affected ?? 0) === 1;
  }

  /** Keeps a started authorization until the callback completes it. */
  async begin(authorization: McpOAuthAuthorization): Promise<void> {
    await this.bounded(
      this.authorizations.insert({ ...authorization, scopeKey: storedPrincipalKey(authorization.scopeKey) }),
      'OAuth authorization start',
    );
  }

  /**
   * The started authorization of a state hash, removed so that it completes once: null when
   * unknown, already taken (by this or another replica) or expired. Expired rows go too.
   */
  async take(stateHash: string): Promise<McpOAuthAuthorization | null> {
    const now = new Date();
    return this.bounded(
      (async () => {
        const row = await this.authorizations.findOne({ where: { stateHash } });
        if (!row) return null;
        const removed = await this.authorizations.delete({ stateHash });
        await this.authorizations
          .createQueryBuilder()
          .delete()
          .from(McpOAuthAuthorization)
          .where('expires_at < :now', { now })
          .execute();
        return (removed.affected ?? 0) === 1 && row.expiresAt > now ? row : null;
      })(),
      'OAuth authorization completion',
    );
  }
}
