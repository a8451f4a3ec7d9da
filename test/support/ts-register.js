/**
 * `node -r <this file> fixture.ts`: runs the TypeScript of a child process the suites spawn (the
 * example app, worker apps, fixture servers), compiled file by file by SWC with the options Jest
 * compiles the suites with (swc-options.js: CommonJS, ES2022, legacy decorators with their
 * metadata, an inline source map for the stack traces), so a spawned app runs the code an
 * in-process one runs. No types are checked (`npm test` does that beside Jest). The output is
 * cached on disk by content (ts-cache.js): every child of a run loads the same few hundred files
 * of src/mcp, and Jest's global setup compiles them into the cache before the first child starts.
 */
'use strict';

const { readFileSync } = require('node:fs');
const { sep } = require('node:path');
const { transpile } = require('./ts-cache');

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
