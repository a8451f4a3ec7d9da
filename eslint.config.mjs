// @ts-check
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
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
  // tsconfig.spec.json is the one project that covers all of them (tsconfig.json leaves out specs and test/).
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        project: './tsconfig.spec.json',
        tsconfigRootDir: import.meta.dirname,
      },
      globals: { ...globals.node },
    },
    rules: {},
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
