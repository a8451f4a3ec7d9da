/**
 * `node -r <this file> fixture.ts`: runs the TypeScript of a child process the suites spawn (the
 * example app, worker apps, fixture servers), compiled file by file by SWC with the options Jest
 * compiles the suites with (swc-options.js: CommonJS, ES2022, legacy decorators with their
 * metadata, an inline source map for the stack traces), so a spawned app runs the code an
 * in-process one runs. No types are checked (`npm test` does that beside Jest). The output is
 * cached on disk by content: every child of a run loads the same few hundred files of src/mcp, and
 * only the first one compiles them. The cache key covers the file's path and text, the options and
 * the SWC version, so an edited file is compiled again.
 */
'use strict';

const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, sep } = require('node:path');
const SWC_OPTIONS = require('./swc-options');

const CACHE = join(
  tmpdir(),
  `durable-mcp-ts-cache-${typeof process.getuid === 'function' ? process.getuid() : 'user'}`,
);

/** What decides the output besides the file itself: the options and the installed SWC. */
const settingsKey = createHash('sha256')
  .update(JSON.stringify(SWC_OPTIONS))
  .update(readFileSync(require.resolve('@swc/core/package.json')))
  .digest('hex');

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
  const output = require('@swc/core').transformSync(source, { ...SWC_OPTIONS, filename }).code;
  // Written under a private name, then renamed: a concurrent reader sees the whole file or none.
  mkdirSync(CACHE, { recursive: true });
  const partial = `${cached}.${process.pid}.tmp`;
  writeFileSync(partial, output);
  renameSync(partial, cached);
  return output;
}

/** The TypeScript files this process compiled: their stack frames are mapped back to the source. */
const compiled = new Set();

// Stack traces point at the TypeScript lines, through the inline source maps, read only when a
// trace is formatted. Node's own source maps (`process.setSourceMapsEnabled`) would decode and
// parse the map of every module as it loads, the packages' map files included: about 0.6 s of
// CPU in every child that loads the library, for traces most children never print. The output
// of a compiled file is found again in the cache by its key.
require('source-map-support').install({
  environment: 'node',
  handleUncaughtExceptions: false,
  hookRequire: false,
  retrieveFile: (path) => (compiled.has(path) ? transpile(readFileSync(path, 'utf8'), path) : null),
});

require.extensions['.ts'] = function loadTypeScript(module, filename) {
  if (filename.includes(`${sep}node_modules${sep}`)) {
    throw new Error(`${filename}: TypeScript inside node_modules is not transpiled (as with ts-node)`);
  }
  compiled.add(filename);
  module._compile(transpile(readFileSync(filename, 'utf8'), filename), filename);
};
