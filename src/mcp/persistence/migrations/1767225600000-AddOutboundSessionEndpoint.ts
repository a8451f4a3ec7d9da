import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Adds `endpoint` to `mcp_outbound_sessions`: the HTTP URL or stdio program a row was established
 * with, so the protocol-era verdict it records is reused by every worker while the configuration
 * of the server still points at the same endpoint.
 */
export class AddOutboundSessionEndpoint1767225600000 implements MigrationInterface {
  /** @inheritdoc */
  name = 'AddOutboundSessionEndpoint1767225600000';

  /** @inheritdoc */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "mcp_outbound_sessions" ADD "endpoint" varchar(255)`);
  }

  /** @inheritdoc */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "mcp_outbound_sessions" DROP COLUMN "endpoint"`);
  }
}
