import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Creates the three durable-mcp tables on PostgreSQL: inbound sessions, the event log and the
 * outbound sessions of the client.
 */
export class CreateMcpTables1764489600000 implements MigrationInterface {
  /** @inheritdoc */
  name = 'CreateMcpTables1764489600000';

  /** @inheritdoc */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "mcp_inbound_sessions" (
        "id" varchar(36) PRIMARY KEY,
        "mount" varchar(128) NOT NULL,
        "session_id" varchar(128) NOT NULL,
        "principal_key" varchar(255) NOT NULL,
        "principal_label" varchar(255) NOT NULL,
        "protocol_version" varchar(32) NOT NULL,
        "client_info" jsonb,
        "client_capabilities" jsonb,
        "created_at" timestamp NOT NULL,
        "last_seen_at" timestamp NOT NULL,
        "terminated_at" timestamp
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "mcp_inbound_sessions_session_id_uq" ON "mcp_inbound_sessions" ("session_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "mcp_inbound_sessions_mount_principal_idx" ON "mcp_inbound_sessions" ("mount", "principal_key")`,
    );
    await queryRunner.query(`
      CREATE TABLE "mcp_events" (
        "id" varchar(36) PRIMARY KEY,
        "created_at" timestamp NOT NULL,
        "direction" varchar(8) NOT NULL,
        "mount" varchar(128),
        "server" varchar(128),
        "session_ref" varchar(36),
        "principal_key" varchar(255),
        "kind" varchar(16) NOT NULL,
        "method" varchar(255),
        "protocol_version" varchar(32),
        "request" jsonb,
        "response" jsonb,
        "status" integer,
        "error_code" integer,
        "is_error" boolean NOT NULL DEFAULT false,
        "duration_ms" integer NOT NULL,
        "note" text
      )`);
    await queryRunner.query(`CREATE INDEX "mcp_events_session_ref_idx" ON "mcp_events" ("session_ref")`);
    await queryRunner.query(`CREATE INDEX "mcp_events_created_at_idx" ON "mcp_events" ("created_at")`);
    await queryRunner.query(`
      CREATE TABLE "mcp_outbound_sessions" (
        "id" varchar(36) PRIMARY KEY,
        "server" varchar(128) NOT NULL,
        "scope_key" varchar(255) NOT NULL,
        "remote_session_id" varchar(255),
        "protocol_version" varchar(32) NOT NULL,
        "server_info" jsonb,
        "server_capabilities" jsonb,
        "created_at" timestamp NOT NULL,
        "updated_at" timestamp NOT NULL,
        "closed_at" timestamp
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "mcp_outbound_sessions_server_scope_uq" ON "mcp_outbound_sessions" ("server", "scope_key")`,
    );
  }

  /** @inheritdoc */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "mcp_outbound_sessions"`);
    await queryRunner.query(`DROP TABLE "mcp_events"`);
    await queryRunner.query(`DROP TABLE "mcp_inbound_sessions"`);
  }
}
