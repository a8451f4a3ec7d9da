/**
 * The tests mutation testing runs (`npm run mutation`): the unit specs, plus the end-to-end suites
 * that exercise the mutated core for real (queue, stdio deadlines and shutdown, the stateless
 * request state, the event log). They need PostgreSQL and Redis, like `npm test`.
 */
const base = require('./jest.config');

const e2e = base.projects.find((project) => project.displayName === 'e2e');

module.exports = {
  ...base,
  reporters: ['default'],
  projects: [
    base.projects.find((project) => project.displayName === 'unit'),
    {
      ...e2e,
      testMatch: [
        '<rootDir>/test/e2e/client-bull.e2e-spec.ts',
        '<rootDir>/test/e2e/client-inline.e2e-spec.ts',
        '<rootDir>/test/e2e/stdio-hostile.e2e-spec.ts',
        '<rootDir>/test/e2e/stateless-mrtr.e2e-spec.ts',
        '<rootDir>/test/e2e/http-wire.e2e-spec.ts',
      ],
    },
  ],
};
