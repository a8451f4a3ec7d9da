import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The tables of the client's user-delegated OAuth (`authorizationCode`): `mcp_oauth_grants`
 * (sealed tokens per server and user) and `mcp_oauth_authorizations` (authorizations started and
 * not yet completed).
 */
export class AddMcpOAuthGrants1767744000000 implements MigrationInterface {
  /** @inheritdoc */
  name = 'AddMcpOAuthGrants1767744000000';

  /** @inheritdoc */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "mcp_oauth_grants" (
        "id" varchar(36) PRIMARY KEY,
        "server" varchar(128) NOT NULL,
        "scope_key" varchar(255) NOT NULL,
        "issuer" varchar(2048) NOT NULL,
        "client_id" varchar(2048) NOT NULL,
        "resource" varchar(2048) NOT NULL,
        "scope" text NOT NULL,
        "wanted_scope" text,
        "access_token" text NOT NULL,
        "refresh_token" text,
        "expires_at" timestamp NOT NULL,
        "refreshing_until" timestamp,
        "version" integer NOT NULL,
        "created_at" timestamp NOT NULL,
        "updated_at" timestamp NOT NULL
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "mcp_oauth_grants_server_scope_uq" ON "mcp_oauth_grants" ("server", "scope_key")`,
    );
    await queryRunner.query(`
      CREATE TABLE "mcp_oauth_authorizations" (
        "state_hash" varchar(64) PRIMARY KEY,
        "server" varchar(128) NOT NULL,
        "scope_key" varchar(255) NOT NULL,
        "issuer" varchar(2048) NOT NULL,
        "client_id" varchar(2048) NOT NULL,
        "resource" varchar(2048) NOT NULL,
        "scope" text NOT NULL,
        "redirect_uri" varchar(2048) NOT NULL,
        "code_verifier" text NOT NULL,
        "redirect_after" varchar(2048),
        "created_at" timestamp NOT NULL,
        "expires_at" timestamp NOT NULL
      )`);
    await queryRunner.query(
      `CREATE INDEX "mcp_oauth_authorizations_expires_at_idx" ON "mcp_oauth_authorizations" ("expires_at")`,
    );
  }

  /** @inheritdoc */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "mcp_oauth_authorizations"`);
    await queryRunner.query(`DROP TABLE "mcp_oauth_grants"`);
  }
}
