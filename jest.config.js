/**
 * Jest: unit specs beside the code, e2e suites against real PostgreSQL (and Redis) in test/e2e and
 * test/faults (see `globalSetup` below for where they come from). `npm test` runs both in parallel
 * workers (the few e2e suites listed in `SERIAL_E2E` one at a time after them). With `--coverage`
 * (as .ci/run runs it) it measures the library over both and fails under the thresholds below.
 */
/**
 * TypeScript is compiled for Jest by SWC (`@swc/jest`), file by file, as tsconfig.json would emit
 * it (test/support/swc-options.js, which the child processes of the suites use too). It checks no
 * types: `npm test` runs `tsc` over the specs and suites beside it (`typecheck-and-lint`). Coverage is
 * Jest's own (babel-plugin-istanbul over the output, mapped back through its source map).
 */
/**
 * `MCP_TEST_COVERAGE=1 npm test` (as .ci/run runs it): coverage of src/mcp over the whole suite,
 * collected once per worker rather than once per suite (see test/support/worker-coverage/raw-coverage.js
 * for why), with the same summary and thresholds as Jest's `--coverage`, which still works too.
 */
const COVERAGE = process.env.MCP_TEST_COVERAGE === '1';
/** The floor the suite keeps, either way: lines 95 %, branches 90 % of src/mcp. */
const COVERAGE_THRESHOLDS = { lines: 95, branches: 90 };
if (COVERAGE) {
  process.env.MCP_TEST_COVERAGE_RAW_DIR ??= require('node:path').join(
    __dirname,
    'coverage',
    `.raw-${process.pid}-${Date.now()}`,
  );
}

const swcTypeScript = ['@swc/jest', require('./test/support/swc-options')];

/**
 * jose 6 (the JWT verifier's library), oidc-provider 9 (an authorization server's library) and
 * ArkType 2 with its parts (`@ark/*`, arkregex; a Standard Schema library of the schema suites)
 * are ES modules without top-level await. Node 20.19 `require()`s them, Jest's module system
 * cannot: their files are compiled to CommonJS like ours (oidc-provider's other dependencies, koa
 * and debug, are CommonJS already).
 */
const esmPackages = {
  transform: {
    '^.+\\.ts$': COVERAGE
      ? ['<rootDir>/test/support/worker-coverage/instrumenting-transformer.js', swcTypeScript[1]]
      : swcTypeScript,
    '^.+/node_modules/(jose|oidc-provider|arktype|arkregex|@ark/[^/]+)/.+\\.js$': [
      '@swc/jest',
      {
        swcrc: false,
        jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022' },
        module: { type: 'commonjs' },
        sourceMaps: 'inline',
      },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!(jose|oidc-provider|arktype|arkregex|@ark/[^/]+)/)'],
};

/**
 * Node's environment, in which each module is compiled once per worker rather than once per suite
 * (test/support/compile-once.js). `LEAK_CHECK=1` names, after each suite, the handles it left open
 * (see the environment's file). With coverage, the environment collects each suite's counters (see
 * test/support/worker-coverage).
 */
const testEnvironment = COVERAGE
  ? `<rootDir>/test/support/worker-coverage/${process.env.LEAK_CHECK ? 'leak-check' : 'node'}.environment.js`
  : process.env.LEAK_CHECK
    ? '<rootDir>/test/support/leak-check.environment.js'
    : '<rootDir>/test/support/node.environment.js';

/**
 * A mutation run copies the repository into .stryker-tmp; one that was interrupted leaves the copy
 * behind, and its package.json and modules must not collide with ours.
 */
const modulePathIgnorePatterns = ['<rootDir>/.stryker-tmp/'];

/** The end-to-end suites: real PostgreSQL, Redis, peers and child processes. */
const E2E_MATCH = ['<rootDir>/test/e2e/**/*.e2e-spec.ts', '<rootDir>/test/faults/**/*.e2e-spec.ts'];

/**
 * The e2e suites that cannot share the machine with another suite, run one at a time after the
 * others (see test/support/serial-runner.js):
 * - hostile-http-servers: bounds the memory a client process grows by while hostile servers send
 *   it a gigabyte; beside other suites its collector gets less of the CPU, and garbage that waits
 *   longer to be freed counts against the bound.
 */
const SERIAL_E2E = ['test/faults/hostile-http-servers.e2e-spec.ts'];

/**
 * What both e2e projects share. The suites run in Jest's workers side by side, the unit specs'
 * too: each suite has databases, ports, Redis key prefixes and child processes of its own, and each
 * worker a Redis of its own (see test/support/test-services.js), so two suites never meet.
 */
const e2e = {
  testEnvironment,
  rootDir: '.',
  modulePathIgnorePatterns,
  setupFilesAfterEnv: ['<rootDir>/test/support/no-unhandled-rejections.setup.ts'],
  ...esmPackages,
  moduleFileExtensions: ['ts', 'js', 'json'],
};

module.exports = {
  testTimeout: 30000,
  // A worker whose heap is over 1 GB once a suite ends is replaced by a fresh one. Each e2e suite
  // leaves about 15 MB behind in its worker (20 MB with coverage, whose counters come with their
  // maps), so a worker that ran a hundred suites held a heap of up to two GB for its garbage collector
  // to walk again and again: on a 2-core machine, Jest alone over the whole suite with coverage took
  // 455-473 s without the limit and 394-426 s with it.
  workerIdleMemoryLimit: '1GB',
  // PostgreSQL and Redis for the run, once per run before the first test: the shared servers
  // (TEST_PG_URL and TEST_REDIS_URL, else 127.0.0.1:5432 and 127.0.0.1:6379), or, for one that does
  // not answer, a private server this run starts and the teardown stops (test/support/test-services.js).
  globalSetup: '<rootDir>/test/support/test-services.setup.js',
  globalTeardown: '<rootDir>/test/support/test-services.teardown.js',
  // The longest suites first, by the durations in test/support/suite-durations.json: a run from a
  // clean clone has no Jest cache to order by (see test/support/duration-sequencer.js).
  testSequencer: '<rootDir>/test/support/duration-sequencer.js',
  reporters: [
    'default',
    ...(COVERAGE
      ? [
          [
            '<rootDir>/test/support/worker-coverage/coverage-reporter.js',
            { thresholds: COVERAGE_THRESHOLDS, swc: swcTypeScript[1] },
          ],
        ]
      : []),
    '<rootDir>/test/support/summary-reporter.js',
    '<rootDir>/test/support/open-handles-reporter.js',
  ],
  collectCoverageFrom: [
    '<rootDir>/src/mcp/**/*.ts',
    '!<rootDir>/src/mcp/**/*.spec.ts',
    '!<rootDir>/src/mcp/**/index.ts',
  ],
  coverageReporters: ['text-summary', 'json-summary'],
  coverageThreshold: { global: COVERAGE_THRESHOLDS },
  projects: [
    {
      displayName: 'unit',
      testEnvironment,
      rootDir: '.',
      testMatch: ['<rootDir>/src/**/*.spec.ts'],
      modulePathIgnorePatterns,
      ...esmPackages,
      moduleFileExtensions: ['ts', 'js', 'json'],
    },
    {
      displayName: 'e2e',
      ...e2e,
      testMatch: E2E_MATCH,
      testPathIgnorePatterns: ['/node_modules/', ...SERIAL_E2E.map((path) => `<rootDir>/${path}`)],
    },
    ...(SERIAL_E2E.length
      ? [
          {
            displayName: 'e2e-serial',
            ...e2e,
            testMatch: SERIAL_E2E.map((path) => `<rootDir>/${path}`),
            // One suite at a time, in Jest's own process, whatever --maxWorkers says.
            runner: '<rootDir>/test/support/serial-runner.js',
          },
        ]
      : []),
  ],
};
