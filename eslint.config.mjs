// @ts-check
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      'node_modules/',
      'dist/',
      'coverage/',
      'reports/',
      'artifacts/',
      'temp/',
      'data/',
      '.stryker-tmp/',
      '.ci/',
      'docs/.vitepress/dist/',
      'docs/.vitepress/cache/',
    ],
  },

  // TypeScript: the library, the example app, the e2e suites and fixtures, the benchmarks.
  // tsconfig.spec.json is the one project that covers all of them (tsconfig.json leaves out specs and test/);
  // the globs are its `include`, so a TypeScript file outside it is not linted rather than refused.
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'ormconfig.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        project: './tsconfig.spec.json',
        tsconfigRootDir: import.meta.dirname,
      },
      globals: { ...globals.node },
    },
    rules: {
      // An `async` method without `await` is how this code keeps a promise-returning contract (the store,
      // queue and pub/sub interfaces, the in-memory test doubles, Nest hooks): it turns a throw into a
      // rejection. Dropping `async` to satisfy the rule would make those throws synchronous.
      '@typescript-eslint/require-await': 'off',
      // A leading underscore marks a value that is deliberately unused (a callback parameter kept for its
      // position, a key taken out of an object before spreading the rest).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // Rejecting with, or rethrowing, a caught value or an AbortSignal's reason unchanged is deliberate:
      // those are typed `unknown`, and wrapping them would change what callers receive.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // A `let` that a closure reads before its one assignment (a timer the close handler clears, set after
      // the handler is installed) cannot become a `const` declared later without a temporal-dead-zone error.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // A type-only `declare namespace` merged with its owner names the owner's parts
      // (`McpModuleOptions.Limits`, `McpRegistry.Tool`) without adding a name to the entry point;
      // namespaces that hold code stay refused.
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
    },
  },

  // Specs and e2e suites pass mocked methods to `expect(...)` (`expect(store.save).toHaveBeenCalled()`),
  // which never calls them, so the unbound-method rule only reports false positives there.
  {
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
    },
  },

  // Jest's asymmetric matchers (`expect.any(String)`, `expect.objectContaining(...)`) are typed `any`, and
  // specs and benchmarks read wire JSON (`JSON.parse`, supertest and inject bodies, raw query rows) only to
  // assert on it or count it: the checks, not the types, judge those values, so the no-unsafe-* rules
  // report only noise there.
  {
    files: ['**/*.spec.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },

  // Plain JavaScript: stdio peers and tools under test/fixtures, smoke tests, scripts, tool configs.
  // They are CommonJS scripts outside every tsconfig, so they get the rules that need no types.
  {
    files: ['**/*.js', '**/*.cjs'],
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { ...globals.node },
    },
  },
  {
    files: ['**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'module',
      globals: { ...globals.node },
    },
  },

  // Last, so that it turns off every stylistic rule Prettier owns.
  prettier,
);
