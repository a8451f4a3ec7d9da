import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The table of the built-in authorization server (`McpAuthorizationServerModule`):
 * `mcp_oauth_provider_records`, one row per object its `oidc-provider` adapter stores.
 */
export class AddMcpOAuthProviderRecords1768003200000 implements MigrationInterface {
  /** @inheritdoc */
  name = 'AddMcpOAuthProviderRecords1768003200000';

  /** @inheritdoc */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "mcp_oauth_provider_records" (
        "model" varchar(64) NOT NULL,
        "id" varchar(2048) NOT NULL,
        "payload" text NOT NULL,
        "grant_id" varchar(255),
        "user_code" varchar(255),
        "uid" varchar(255),
        "expires_at" timestamp,
        "consumed_at" timestamp,
        PRIMARY KEY ("model", "id")
      )`);
    await queryRunner.query(
      `CREATE INDEX "idx_mcp_oauth_provider_records_grant" ON "mcp_oauth_provider_records" ("grant_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "idx_mcp_oauth_provider_records_uid" ON "mcp_oauth_provider_records" ("uid")`,
    );
    await queryRunner.query(
      `CREATE INDEX "idx_mcp_oauth_provider_records_expires" ON "mcp_oauth_provider_records" ("expires_at")`,
    );
  }

  /** @inheritdoc */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "mcp_oauth_provider_records"`);
  }
}
