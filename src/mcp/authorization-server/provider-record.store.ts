import { IsNull, type DataSource, type Repository } from 'typeorm';
import { McpOAuthProviderRecord } from '../persistence/entities/oauth-provider-record.entity';

/** What oidc-provider hands an adapter to store: its own object, with these fields read here. */
export interface ProviderPayload {
  grantId?: string;
  userCode?: string;
  uid?: string;
  consumed?: number;
  [field: string]: unknown;
}

/** The interface of an oidc-provider adapter (one instance per model). */
export interface ProviderAdapter {
  upsert(id: string, payload: ProviderPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<ProviderPayload | undefined>;
  findByUserCode(userCode: string): Promise<ProviderPayload | undefined>;
  findByUid(uid: string): Promise<ProviderPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

/**
 * The objects of oidc-provider in `mcp_oauth_provider_records`, one row per model and id, so that
 * every replica on the database sees the same clients, grants, sessions, codes and tokens. An
 * expired row is never returned (the pruner deletes it later); `consume` stamps the row, and
 * `find` hands the stamp back as `consumed`, which oidc-provider reads to refuse a code or a
 * rotated refresh token used twice.
 */
export class TypeOrmProviderAdapter implements ProviderAdapter {
  private readonly rows: Repository<McpOAuthProviderRecord>;

  constructor(
    dataSource: DataSource,
    private readonly model: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.rows = dataSource.getRepository(McpOAuthProviderRecord);
  }

  /** A class oidc-provider can instantiate per model (`new Adapter(name)`), bound to this database. */
  static forDataSource(dataSource: DataSource): new (model: string) => TypeOrmProviderAdapter {
    return class extends TypeOrmProviderAdapter {
      constructor(model: string) {
        super(dataSource, model);
      }
    };
  }

  async upsert(id: string, payload: ProviderPayload, expiresIn?: number): Promise<void> {
    const expiresAt = expiresIn ? new Date(this.now().getTime() + expiresIn * 1000) : null;
    await this.rows.upsert(
      {
        model: this.model,
        id,
        payload: JSON.stringify(payload),
        grantId: payload.grantId ?? null,
        userCode: payload.userCode ?? null,
        uid: payload.uid ?? null,
        expiresAt,
        consumedAt: null,
      },
      ['model', 'id'],
    );
  }

  find(id: string): Promise<ProviderPayload | undefined> {
    return this.findBy({ id });
  }

  findByUserCode(userCode: string): Promise<ProviderPayload | undefined> {
    return this.findBy({ userCode });
  }

  findByUid(uid: string): Promise<ProviderPayload | undefined> {
    return this.findBy({ uid });
  }

  async consume(id: string): Promise<void> {
    await this.rows.update({ model: this.model, id, consumedAt: IsNull() }, { consumedAt: this.now() });
  }

  async destroy(id: string): Promise<void> {
    await this.rows.delete({ model: this.model, id });
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.rows.delete({ model: this.model, grantId });
  }

  /** Deletes every row (of any model) that expired before `now`; returns how many it deleted. */
  static async deleteExpired(dataSource: DataSource, now: Date): Promise<number> {
    const result = await dataSource
      .getRepository(McpOAuthProviderRecord)
      .createQueryBuilder()
      .delete()
      .where('expires_at < :now', { now })
      .execute();
    return result.affected ?? 0;
  }

  private async findBy(where: { id?: string; userCode?: string; uid?: string }) {
    const row = await this.rows.findOneBy({ model: this.model, ...where });
    if (!row || (row.expiresAt !== null && row.expiresAt.getTime() <= this.now().getTime())) return undefined;
    const payload = JSON.parse(row.payload) as ProviderPayload;
    return row.consumedAt ? { ...payload, consumed: Math.floor(row.consumedAt.getTime() / 1000) } : payload;
  }
}
