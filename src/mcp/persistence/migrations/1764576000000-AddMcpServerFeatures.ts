import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Server features on PostgreSQL: the log level a session asked for (`logging/setLevel`) and the
 * table of resource subscriptions (`resources/subscribe`).
 */
export class AddMcpServerFeatures1764576000000 implements MigrationInterface {
  /** @inheritdoc */
  name = 'AddMcpServerFeatures1764576000000';

  /** @inheritdoc */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "mcp_inbound_sessions" ADD "log_level" varchar(16)`);
    await queryRunner.query(`
      CREATE TABLE "mcp_resource_subscriptions" (
        "id" varchar(36) PRIMARY KEY,
        "mount" varchar(128) NOT NULL,
        "session_id" varchar(128) NOT NULL,
        "uri" varchar(2048) NOT NULL,
        "created_at" timestamp NOT NULL
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "mcp_resource_subscriptions_session_uri_uq" ON "mcp_resource_subscriptions" ("session_id", "uri")`,
    );
    await queryRunner.query(
      `CREATE INDEX "mcp_resource_subscriptions_mount_uri_idx" ON "mcp_resource_subscriptions" ("mount", "uri")`,
    );
  }

  /** @inheritdoc */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "mcp_resource_subscriptions"`);
    await queryRunner.query(`ALTER TABLE "mcp_inbound_sessions" DROP COLUMN "log_level"`);
  }
}
