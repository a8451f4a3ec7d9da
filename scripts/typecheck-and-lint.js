#!/usr/bin/env node
// The type check of the specs and suites (`npm run typecheck:tests`) and ESLint (`npm run lint`)
// in one process, over one TypeScript program of tsconfig.spec.json: ESLint's type-aware rules ask
// the checker that the type check already filled, instead of building the same program a second
// time. It prints TypeScript's errors, then ESLint's report, and exits 1 when either has anything
// to say (ESLint's warnings count, as with `--max-warnings 0`).
//
//   node scripts/typecheck-and-lint.js
'use strict';

const { join } = require('node:path');
const ts = require('typescript');
const { ESLint } = require('eslint');

const ROOT = join(__dirname, '..');
const PROJECT = join(ROOT, 'tsconfig.spec.json');
/** The TypeScript that eslint.config.mjs lints type-aware: its TypeScript block's `files`, tsconfig.spec.json's `include`. */
const TYPED_FILES = ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'ormconfig.ts'];

/** The program `tsc -p tsconfig.spec.json --noEmit` checks. */
function createProgram() {
  const { config, error } = ts.readConfigFile(PROJECT, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, ROOT, { noEmit: true }, PROJECT);
  return ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    projectReferences: parsed.projectReferences,
    configFileParsingDiagnostics: parsed.errors,
  });
}

async function main() {
  const started = Date.now();
  const program = createProgram();
  const diagnostics = [...program.getConfigFileParsingDiagnostics(), ...ts.getPreEmitDiagnostics(program)];
  const host = {
    getCanonicalFileName: (fileName) => fileName,
    getCurrentDirectory: () => ROOT,
    getNewLine: () => '\n',
  };
  const typed = Date.now();
  if (diagnostics.length > 0) {
    process.stdout.write(ts.formatDiagnostics(diagnostics, host));
    process.stdout.write(`TypeScript: ${diagnostics.length} error(s) in tsconfig.spec.json\n`);
  } else {
    process.stdout.write(`TypeScript: no errors (${((typed - started) / 1000).toFixed(1)} s)\n`);
  }

  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfig: { files: TYPED_FILES, languageOptions: { parserOptions: { programs: [program] } } },
  });
  const results = await eslint.lintFiles(['.']);
  const problems = results.reduce((sum, result) => sum + result.errorCount + result.warningCount, 0);
  const report = await (await eslint.loadFormatter('stylish')).format(results);
  if (report) process.stdout.write(report.endsWith('\n') ? report : `${report}\n`);
  process.stdout.write(
    `ESLint: ${problems === 0 ? 'no problems' : `${problems} problem(s)`} in ${results.length} files (${((Date.now() - typed) / 1000).toFixed(1)} s)\n`,
  );
  if (diagnostics.length > 0 || problems > 0) process.exitCode = 1;
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? String(error)}\n`);
  process.exitCode = 1;
});
