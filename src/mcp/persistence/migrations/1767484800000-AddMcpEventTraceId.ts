import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Adds `trace_id` to `mcp_events`: the OpenTelemetry trace id (32 hex characters) of the
 * exchange a row records, null when no span context was valid.
 */
export class AddMcpEventTraceId1767484800000 implements MigrationInterface {
  /** @inheritdoc */
  name = 'AddMcpEventTraceId1767484800000';

  /** @inheritdoc */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "mcp_events" ADD "trace_id" varchar(32)`);
  }

  /** @inheritdoc */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "mcp_events" DROP COLUMN "trace_id"`);
  }
}
