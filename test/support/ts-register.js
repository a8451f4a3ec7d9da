/**
 * `node -r <this file> fixture.ts`: runs the TypeScript of a child process the suites spawn (the
 * example app, worker apps, fixture servers), like `ts-node/register/transpile-only` (the same
 * per-file `transpileModule` with the repository's compiler options), but with the output cached
 * on disk by content. Every child of a run loads the same few hundred files of src/mcp: ts-node
 * transpiles all of them again in each child (seconds of CPU per spawn), this does it once and
 * later children do not even load the compiler. The cache key covers the file's path and text,
 * the compiler options and the TypeScript version, so an edited file is transpiled again.
 * TS_NODE_PROJECT picks the tsconfig, as for ts-node (default: the repository's tsconfig.json).
 */
'use strict';

const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve, sep } = require('node:path');

const ROOT = resolve(__dirname, '..', '..');
const PROJECT = process.env.TS_NODE_PROJECT ? resolve(process.env.TS_NODE_PROJECT) : join(ROOT, 'tsconfig.json');
const CACHE = join(
  tmpdir(),
  `durable-mcp-ts-cache-${typeof process.getuid === 'function' ? process.getuid() : 'user'}`,
);

let typescript;
let compilerOptions;
/** The compiler and the project's options, loaded on the first file the cache does not have. */
function compiler() {
  if (!typescript) {
    typescript = require('typescript');
    const { config, error } = typescript.readConfigFile(PROJECT, typescript.sys.readFile);
    if (error) throw new Error(typescript.flattenDiagnosticMessageText(error.messageText, '\n'));
    const parsed = typescript.parseJsonConfigFileContent(config, typescript.sys, ROOT, undefined, PROJECT);
    compilerOptions = { ...parsed.options };
    // As ts-node does: JavaScript and an inline source map (for the stack traces), no declarations, no output files.
    for (const option of [
      'out',
      'outFile',
      'outDir',
      'rootDir',
      'composite',
      'declaration',
      'declarationDir',
      'declarationMap',
      'emitDeclarationOnly',
      'incremental',
      'tsBuildInfoFile',
      'noEmit',
      'sourceMap',
    ]) {
      delete compilerOptions[option];
    }
    compilerOptions.inlineSourceMap = true;
    compilerOptions.inlineSources = true;
  }
  return typescript;
}

/** What decides the output besides the file itself: the tsconfig's text and the installed TypeScript. */
const settingsKey = (() => {
  const hash = createHash('sha256');
  hash.update(readFileSync(PROJECT));
  // tsconfig.spec.json extends tsconfig.json: both count.
  hash.update(readFileSync(join(ROOT, 'tsconfig.json')));
  hash.update(readFileSync(require.resolve('typescript/package.json')));
  return hash.digest('hex');
})();

function transpile(source, filename) {
  const key = createHash('sha256')
    .update(settingsKey)
    .update('\0')
    .update(filename)
    .update('\0')
    .update(source)
    .digest('hex');
  const cached = join(CACHE, `${key}.js`);
  try {
    return readFileSync(cached, 'utf8');
  } catch {
    // not cached yet
  }
  const ts = compiler();
  const output = ts.transpileModule(source, {
    fileName: filename,
    compilerOptions,
    reportDiagnostics: false,
  }).outputText;
  // Written under a private name, then renamed: a concurrent reader sees the whole file or none.
  mkdirSync(CACHE, { recursive: true });
  const partial = `${cached}.${process.pid}.tmp`;
  writeFileSync(partial, output);
  renameSync(partial, cached);
  return output;
}

process.setSourceMapsEnabled(true);

require.extensions['.ts'] = function loadTypeScript(module, filename) {
  if (filename.includes(`${sep}node_modules${sep}`)) {
    throw new Error(`${filename}: TypeScript inside node_modules is not transpiled (as with ts-node)`);
  }
  module._compile(transpile(readFileSync(filename, 'utf8'), filename), filename);
};
