/**
 * The tests mutation testing runs (`npm run mutation`): the unit specs beside the mutated core.
 * The end-to-end suites are left out: each takes about 45 s here and Stryker would re-run them for
 * every mutant they cover; the unit specs kill what they kill. Set MUTATION_E2E to a comma-separated
 * list of suite names (e.g. `client-inline,stdio-hostile`) to add some back for a measurement; they
 * need PostgreSQL and Redis, like `npm test`.
 */
const base = require('./jest.config');

const unit = base.projects.find((project) => project.displayName === 'unit');
const e2e = base.projects.find((project) => project.displayName === 'e2e');
const extra = (process.env.MUTATION_E2E ?? '')
  .split(',')
  .map((name) => name.trim())
  .filter(Boolean);

module.exports = {
  ...base,
  reporters: ['default'],
  projects: [
    unit,
    ...(extra.length
      ? [{ ...e2e, testMatch: extra.map((name) => `<rootDir>/test/e2e/${name}.e2e-spec.ts`) }]
      : []),
  ],
};
