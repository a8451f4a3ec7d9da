import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An index on `mcp_events` (`principal_key`, `created_at`): the console's pages of one principal
 * (its principal filter, and every page of a console scoped to a principal) read that principal's
 * newest rows from it, instead of walking the whole table's `created_at` index back until enough
 * of its rows turned up, which costs a read of every row for a principal with no recent rows. On a
 * partitioned `mcp_events` PostgreSQL builds it on every partition. It is built inside the
 * migration's transaction and blocks writes to the table meanwhile: on a large table, run it in a
 * maintenance window.
 */
export class AddMcpEventPrincipalIndex1767916800000 implements MigrationInterface {
  /** @inheritdoc */
  name = 'AddMcpEventPrincipalIndex1767916800000';

  /** @inheritdoc */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "mcp_events_principal_created_at_idx" ON "mcp_events" ("principal_key", "created_at")`,
    );
  }

  /** @inheritdoc */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "mcp_events_principal_created_at_idx"`);
  }
}
