/**
 * The tests mutation testing runs (`npm run mutation`): the unit specs written for the mutated
 * core. Stryker starts Jest once per mutant and Jest loads every spec file it is given before the
 * name filter picks the covering tests, so the whole unit project (77 files, most of them booting
 * Nest) made a run take hours on a shared 2-core machine; these focused specs make it minutes.
 * Set MUTATION_UNIT=all to run every unit spec instead (slower, possibly a few more kills), or
 * MUTATION_SPECS to run only some (see scripts/mutation-groups.sh).
 * The end-to-end suites are left out: each takes about 45 s and Stryker would re-run them for
 * every mutant they cover. Set MUTATION_E2E to a comma-separated list of suite names (e.g.
 * `client-inline,stdio-hostile`) to add some back for a measurement; they need PostgreSQL and
 * Redis, like `npm test`.
 *
 * Every test gets 8 s instead of the suite's 30: less than the 10 s Stryker adds to a mutant's
 * baseline time before it calls the mutant timed out, so a mutant that makes a test wait for ever
 * fails that test (killed) instead of being reported as a timeout. The focused specs take well
 * under a second each; the stdio process spec sets its own, longer limit.
 * The queue specs write their at-most-once marks to the run's Redis (TEST_REDIS_URL, see
 * test/support/test-services.js).
 */
const base = require('./jest.config');

const unit = base.projects.find((project) => project.displayName === 'unit');
const e2e = base.projects.find((project) => project.displayName === 'e2e');
const extra = (process.env.MUTATION_E2E ?? '')
  .split(',')
  .map((name) => name.trim())
  .filter(Boolean);

/** The specs of the mutated files (see `mutate` in stryker.config.json). */
const focused = [
  'src/mcp/protocol/*.spec.ts',
  'src/mcp/persistence/group-committer.spec.ts',
  'src/mcp/persistence/typeorm/entity-sql.spec.ts',
  'src/mcp/client/queue/*.spec.ts',
  'src/mcp/server/dispatch/toolset.spec.ts',
  'src/mcp/server/dispatch/toolset.tasks.spec.ts',
  'src/mcp/server/toolset.explorer.spec.ts',
  'src/mcp/client/transports/stdio/stdio-deadline.spec.ts',
  'src/mcp/client/transports/stdio/stdio-process.spec.ts',
  'src/mcp/client/transports/stdio/stdio-handshake.spec.ts',
  'src/mcp/server/stateless/*.spec.ts',
].map((glob) => `<rootDir>/${glob}`);

/** MUTATION_SPECS (comma-separated globs) narrows the specs further, for a run of one file group. */
const only = (process.env.MUTATION_SPECS ?? '')
  .split(',')
  .map((glob) => glob.trim())
  .filter(Boolean)
  .map((glob) => `<rootDir>/${glob}`);
const specs = only.length ? only : focused;

const testTimeout = 8_000;

module.exports = {
  ...base,
  testTimeout,
  reporters: ['default'],
  projects: [
    process.env.MUTATION_UNIT === 'all' ? { ...unit, testTimeout } : { ...unit, testMatch: specs, testTimeout },
    ...(extra.length ? [{ ...e2e, testMatch: extra.map((name) => `<rootDir>/test/e2e/${name}.e2e-spec.ts`) }] : []),
  ],
};
