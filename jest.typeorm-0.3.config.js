/**
 * Jest on TypeORM 0.3: every `typeorm` import in the process (the package's, @nestjs/typeorm's,
 * the tests') resolves to the copy installed in .ci/typeorm-0.3 (`npm run test:typeorm-0.3`
 * installs it). The suites are a focused subset that covers what depends on TypeORM: the HTTP
 * server with its sessions and events on PostgreSQL, the shipped migrations and the SQLite
 * schema, the example app on SQLite, and the inline client that records outbound sessions.
 */
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { POSTGRES_E2E_SUBSET } = require('./test/support/postgres-subset');

const typeorm03 = join(__dirname, '.ci', 'typeorm-0.3', 'node_modules', 'typeorm');
if (!existsSync(join(typeorm03, 'package.json'))) {
  throw new Error(
    'TypeORM 0.3 is not installed: run `npm ci --prefix .ci/typeorm-0.3` (or `npm run test:typeorm-0.3`)',
  );
}

module.exports = {
  testTimeout: 30000,
  // PostgreSQL and Redis for the run, as in jest.config.js (test/support/test-services.js).
  globalSetup: '<rootDir>/test/support/test-services.setup.js',
  globalTeardown: '<rootDir>/test/support/test-services.teardown.js',
  reporters: [
    'default',
    '<rootDir>/test/support/summary-reporter.js',
    '<rootDir>/test/support/open-handles-reporter.js',
  ],
  // Each module compiled once per worker, as in jest.config.js (test/support/compile-once.js).
  testEnvironment: '<rootDir>/test/support/node.environment.js',
  rootDir: '.',
  displayName: 'typeorm-0.3',
  testMatch: ['<rootDir>/test/typeorm-0.3/**/*.spec.ts', ...POSTGRES_E2E_SUBSET.map((path) => `<rootDir>/${path}`)],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.spec.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  // The migrations suite's SQLite case is the one test of the subset that needs TypeORM 1.x.
  testNamePattern: '^(?!shipped migrations and entities create the same tables on SQLite)',
  moduleNameMapper: {
    '^typeorm$': typeorm03,
    '^typeorm/(.*)$': `${typeorm03}/$1`,
  },
};
