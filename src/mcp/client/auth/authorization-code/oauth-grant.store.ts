import { randomUUID } from 'node:crypto';
import { IsNull, LessThan, type DataSource, type Repository } from 'typeorm';
import { McpOAuthAuthorization } from '../../../persistence/entities/oauth-authorization.entity';
import { McpOAuthGrant } from '../../../persistence/entities/oauth-grant.entity';
import { storedPrincipalKey } from '../../../persistence/new-records';
import type { McpTokenCipher } from './token.cipher';

/** A grant as read: its row, and its tokens opened (null when a token no longer opens). */
export interface OpenedGrant {
  row: McpOAuthGrant;
  accessToken: string | null;
  refreshToken: string | null;
}

/** What a token response gives a grant. */
export interface GrantTokens {
  accessToken: string;
  refreshToken: string | null;
  expiresAt: Date;
  scope: string;
}

/** The fields of a grant that name where it comes from. */
export interface GrantOrigin {
  issuer: string;
  clientId: string;
  resource: string;
}

/** A pending authorization as the callback needs it, the verifier opened. */
export interface PendingAuthorization extends Omit<McpOAuthAuthorization, 'codeVerifier'> {
  codeVerifier: string;
}

/**
 * The grants and pending authorizations of `authorizationCode`, in the host's database
 * (`mcp_oauth_grants`, `mcp_oauth_authorizations`). Tokens and verifiers are sealed with the
 * configured keys, each bound to its row's server, scope key and column. Writes that race
 * (refreshes, the callback) are conditional updates, so any number of processes share the rows.
 */
export class McpOAuthGrantStore {
  private readonly grants: Repository<McpOAuthGrant>;
  private readonly pending: Repository<McpOAuthAuthorization>;

  constructor(
    dataSource: DataSource,
    private readonly cipher: McpTokenCipher,
  ) {
    this.grants = dataSource.getRepository(McpOAuthGrant);
    this.pending = dataSource.getRepository(McpOAuthAuthorization);
  }

  /** The grant of a server and scope key, its tokens opened; null when there is none. */
  async find(server: string, scopeKey: string): Promise<OpenedGrant | null> {
    const row = await this.grants.findOneBy({ server, scopeKey: storedPrincipalKey(scopeKey) });
    if (!row) return null;
    const context = (column: string) => `${row.server}\0${row.scopeKey}\0${column}`;
    return {
      row,
      accessToken: this.cipher.open(row.accessToken, context('access')),
      refreshToken: row.refreshToken === null ? null : this.cipher.open(row.refreshToken, context('refresh')),
    };
  }

  /** Stores the tokens of a completed authorization, replacing any earlier grant of the server and scope key. */
  async save(server: string, scopeKey: string, origin: GrantOrigin, tokens: GrantTokens): Promise<void> {
    scopeKey = storedPrincipalKey(scopeKey);
    const now = new Date();
    const fields = { ...origin, ...this.sealed(server, scopeKey, tokens), wantedScope: null, refreshingUntil: null };
    for (let attempt = 0; ; attempt++) {
      const existing = await this.grants.findOneBy({ server, scopeKey });
      if (existing) {
        await this.grants.update({ id: existing.id }, { ...fields, version: existing.version + 1, updatedAt: now });
        return;
      }
      try {
        await this.grants.insert({ id: randomUUID(), server, scopeKey, ...fields, version: 1, createdAt: now, updatedAt: now });
        return;
      } catch (error) {
        // Another callback inserted the row first: replace it on the next round.
        if (attempt > 0) throw error;
      }
    }
  }

  /**
   * Takes the right to refresh a grant for `ms`: only when the row still is at `version` and no
   * other process holds an unexpired lease. False when another process refreshes it.
   */
  async lease(row: McpOAuthGrant, ms: number): Promise<boolean> {
    const now = new Date();
    const result = await this.grants
      .createQueryBuilder()
      .update(McpOAuthGrant)
      .set({ refreshingUntil: new Date(now.getTime() + ms) })
      .where('id = :id AND version = :version', { id: row.id, version: row.version })
      .andWhere('(refreshing_until IS NULL OR refreshing_until < :now)', { now })
      .execute();
    return result.affected === 1;
  }

  /** Stores refreshed tokens (rotation: a new refresh token replaces the old), ending the lease. */
  async refreshed(row: McpOAuthGrant, tokens: GrantTokens): Promise<void> {
    await this.grants.update(
      { id: row.id, version: row.version },
      {
        ...this.sealed(row.server, row.scopeKey, tokens),
        refreshingUntil: null,
        version: row.version + 1,
        updatedAt: new Date(),
      },
    );
  }

  /** Ends a lease without a change (the refresh failed for a passing reason). */
  async release(row: McpOAuthGrant): Promise<void> {
    await this.grants.update({ id: row.id, version: row.version }, { refreshingUntil: null });
  }

  /** Marks the access token of a grant expired (the server refused it), when the row is still at `version`. */
  async expire(row: McpOAuthGrant): Promise<void> {
    await this.grants.update(
      { id: row.id, version: row.version, refreshingUntil: IsNull() },
      { expiresAt: new Date(0), version: row.version + 1, updatedAt: new Date() },
    );
  }

  /** Remembers scopes a 403 `insufficient_scope` asked for: the next authorization asks for them. */
  async want(server: string, scopeKey: string, scope: string): Promise<void> {
    await this.grants.update({ server, scopeKey: storedPrincipalKey(scopeKey) }, { wantedScope: scope });
  }

  /** Forgets a grant the authorization server no longer honours (when it is still at the version read). */
  async remove(row: McpOAuthGrant): Promise<void> {
    await this.grants.delete({ id: row.id, version: row.version });
  }

  /** Keeps a started authorization until `expiresAt`, its verifier sealed. */
  async begin(record: PendingAuthorization): Promise<void> {
    await this.pending.delete({ expiresAt: LessThan(new Date()) });
    await this.pending.insert({
      ...record,
      scopeKey: storedPrincipalKey(record.scopeKey),
      codeVerifier: this.cipher.seal(record.codeVerifier, `${record.stateHash}\0verifier`),
    });
  }

  /**
   * The pending authorization of a state, taken once: the first caller gets it, any later one
   * (a replayed callback) null. An expired one is taken and null is returned.
   */
  async take(stateHash: string): Promise<PendingAuthorization | null> {
    const row = await this.pending.findOneBy({ stateHash });
    if (!row) return null;
    const result = await this.pending.delete({ stateHash });
    if (result.affected !== 1 && result.affected !== undefined && result.affected !== null) return null;
    if (row.expiresAt.getTime() < Date.now()) return null;
    const verifier = this.cipher.open(row.codeVerifier, `${stateHash}\0verifier`);
    return verifier === null ? null : { ...row, codeVerifier: verifier };
  }

  private sealed(server: string, scopeKey: string, tokens: GrantTokens) {
    const context = (column: string) => `${server}\0${scopeKey}\0${column}`;
    return {
      accessToken: this.cipher.seal(tokens.accessToken, context('access')),
      refreshToken: tokens.refreshToken === null ? null : this.cipher.seal(tokens.refreshToken, context('refresh')),
      expiresAt: tokens.expiresAt,
      scope: tokens.scope,
    };
  }
}
