import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The table of task-augmented tool calls (`mcp_tasks`, experimental tasks of 2025-11-25). */
export class AddMcpTasks1767398400000 implements MigrationInterface {
  /** @inheritdoc */
  name = 'AddMcpTasks1767398400000';

  /** @inheritdoc */
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "mcp_tasks" (
        "id" varchar(64) PRIMARY KEY,
        "mount" varchar(128) NOT NULL,
        "principal_key" varchar(255) NOT NULL,
        "session_id" varchar(128),
        "tool_name" varchar(128) NOT NULL,
        "arguments_digest" varchar(64) NOT NULL,
        "payload" jsonb NOT NULL,
        "status" varchar(16) NOT NULL,
        "status_message" text,
        "outcome" jsonb,
        "ttl_ms" bigint,
        "poll_interval_ms" integer NOT NULL,
        "created_at" timestamp NOT NULL,
        "updated_at" timestamp NOT NULL,
        "expires_at" timestamp,
        "started_at" timestamp,
        "worker" varchar(64),
        "attempt" integer NOT NULL DEFAULT 0
      )`);
    await queryRunner.query(
      `CREATE INDEX "mcp_tasks_owner_created_idx" ON "mcp_tasks" ("mount", "principal_key", "created_at")`,
    );
  }

  /** @inheritdoc */
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "mcp_tasks"`);
  }
}
