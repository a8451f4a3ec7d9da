/**
 * How the tests compile TypeScript, with SWC: as tsconfig.json would emit it (CommonJS, ES2022,
 * class fields defined as the spec says, tsc's default for that target, legacy decorators with
 * their `design:*` metadata for Nest's dependency injection), with an inline source map. Jest uses
 * it for the suites (jest.config.js), and ts-register.js for the child processes they spawn, so
 * an app compiled for a suite and the same app spawned by it run the same code. No types are
 * checked here: `npm test` type-checks beside Jest (scripts/typecheck-and-lint.js).
 */
'use strict';

module.exports = {
  swcrc: false,
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    target: 'es2022',
    keepClassNames: true,
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: true },
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};
