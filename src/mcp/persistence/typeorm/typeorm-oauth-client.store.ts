import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { DEFAULT_DATABASE_TIMEOUT_MS, withDatabaseDeadline } from '../database-deadline';
import { McpOAuthClient } from '../entities/oauth-client.entity';

/**
 * The clients `authorizationCode` registered dynamically, in `mcp_oauth_clients`. The first
 * registration kept for a key wins: `keep` inserts only when no row is there (any database,
 * any replica) and answers the row that is, so processes that registered at the same moment
 * all end up with one client id. A client secret arrives sealed.
 */
@Injectable()
export class TypeOrmOAuthClientStore {
  constructor(@InjectRepository(McpOAuthClient) private readonly clients: Repository<McpOAuthClient>) {}

  /** The registration kept for `registrationKey`, or null. */
  find(registrationKey: string): Promise<McpOAuthClient | null> {
    return withDatabaseDeadline(
      this.clients.findOne({ where: { registrationKey } }),
      DEFAULT_DATABASE_TIMEOUT_MS,
      'OAuth client lookup',
    );
  }

  /** Keeps `client` unless another registration of its key is kept already; answers the one kept. */
  async keep(client: McpOAuthClient): Promise<McpOAuthClient> {
    return withDatabaseDeadline(
      (async () => {
        await this.clients.createQueryBuilder().insert().values(client).orIgnore().execute();
        return this.clients.findOneOrFail({ where: { registrationKey: client.registrationKey } });
      })(),
      DEFAULT_DATABASE_TIMEOUT_MS,
      'OAuth client registration',
    );
  }

  /** Forgets the registration of `client` (its secret expired), unless another one replaced it meanwhile. */
  async forget(client: McpOAuthClient): Promise<void> {
    await withDatabaseDeadline(
      this.clients.delete({ registrationKey: client.registrationKey, clientId: client.clientId }),
      DEFAULT_DATABASE_TIMEOUT_MS,
      'OAuth client removal',
    );
  }
}
