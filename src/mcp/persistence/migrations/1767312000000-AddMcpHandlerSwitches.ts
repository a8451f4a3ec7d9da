import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The table of `McpRegistry` switches (`mcp_handler_switches`): a handler of a mount off for
 * everyone (`principal_key` `''`) or for one principal, one row each.
 */
export class AddMcpHandlerSwitches1767312000000 implements MigrationInterface {
  /** @inheritdoc */
  name = 'AddMcpHandlerSwitches1767312000000';

  /** @inheritdoc */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "mcp_handler_switches" (
        "id" varchar(36) PRIMARY KEY,
        "mount" varchar(128) NOT NULL,
        "kind" varchar(16) NOT NULL,
        "name" varchar(1024) NOT NULL,
        "principal_key" varchar(255) NOT NULL,
        "created_at" timestamp NOT NULL
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "mcp_handler_switches_handler_principal_uq" ON "mcp_handler_switches" ("mount", "kind", "name", "principal_key")`,
    );
  }

  /** @inheritdoc */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "mcp_handler_switches"`);
  }
}
