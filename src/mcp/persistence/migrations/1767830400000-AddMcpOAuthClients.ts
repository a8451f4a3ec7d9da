import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The table of the clients `authorizationCode` registered dynamically (RFC 7591):
 * `mcp_oauth_clients`, one row per issuer and redirect URI, shared by every replica.
 */
export class AddMcpOAuthClients1767830400000 implements MigrationInterface {
  /** @inheritdoc */
  name = 'AddMcpOAuthClients1767830400000';

  /** @inheritdoc */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "mcp_oauth_clients" (
        "registration_key" varchar(64) PRIMARY KEY,
        "issuer" varchar(2048) NOT NULL,
        "redirect_uri" varchar(2048) NOT NULL,
        "client_id" varchar(2048) NOT NULL,
        "client_secret" text,
        "secret_expires_at" timestamp,
        "created_at" timestamp NOT NULL
      )`);
  }

  /** @inheritdoc */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "mcp_oauth_clients"`);
  }
}
