/**
 * The PostgreSQL end-to-end subset: the suites that cover what depends on the database server and
 * on TypeORM (the HTTP server with its sessions and events, the shipped migrations, restarts, the
 * inline client that records outbound sessions, resource subscriptions). The TypeORM 0.3 run
 * (jest.typeorm-0.3.config.js) and the PostgreSQL version matrix (scripts/pg-matrix.js) both run it.
 * Paths are relative to the repository's root.
 */
module.exports = {
  POSTGRES_E2E_SUBSET: [
    'test/e2e/http-wire.e2e-spec.ts',
    'test/e2e/sse-streams.e2e-spec.ts',
    'test/e2e/restart.e2e-spec.ts',
    'test/e2e/migrations.e2e-spec.ts',
    'test/e2e/client-inline.e2e-spec.ts',
    'test/e2e/features-subscriptions.e2e-spec.ts',
  ],
};
