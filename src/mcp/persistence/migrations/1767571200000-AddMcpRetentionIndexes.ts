import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The indexes the retention pruner's batches search by: when sessions ended or were last seen,
 * when tasks expire and when outbound sessions last changed (`mcp_events.created_at` already has
 * one).
 */
export class AddMcpRetentionIndexes1767571200000 implements MigrationInterface {
  /** @inheritdoc */
  name = 'AddMcpRetentionIndexes1767571200000';

  /** @inheritdoc */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "mcp_inbound_sessions_terminated_at_idx" ON "mcp_inbound_sessions" ("terminated_at")`,
    );
    await queryRunner.query(
      `CREATE INDEX "mcp_inbound_sessions_last_seen_at_idx" ON "mcp_inbound_sessions" ("last_seen_at")`,
    );
    await queryRunner.query(`CREATE INDEX "mcp_tasks_expires_at_idx" ON "mcp_tasks" ("expires_at")`);
    await queryRunner.query(
      `CREATE INDEX "mcp_outbound_sessions_updated_at_idx" ON "mcp_outbound_sessions" ("updated_at")`,
    );
  }

  /** @inheritdoc */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "mcp_outbound_sessions_updated_at_idx"`);
    await queryRunner.query(`DROP INDEX "mcp_tasks_expires_at_idx"`);
    await queryRunner.query(`DROP INDEX "mcp_inbound_sessions_last_seen_at_idx"`);
    await queryRunner.query(`DROP INDEX "mcp_inbound_sessions_terminated_at_idx"`);
  }
}
