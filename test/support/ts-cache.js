/**
 * The disk cache of the TypeScript that the suites' child processes run (see ts-register.js): each
 * file compiled by SWC with the options Jest compiles the suites with (swc-options.js), kept in a
 * disk cache (disk-cache.js). The cache key covers the file's path and text, the options and the
 * SWC version, so an edited file is compiled again.
 *
 * Jest's global setup fills it before the first suite starts (`warmTranspileCache`): the suites
 * start several children at once (a gateway and its upstreams, a pool of stdio servers), and from
 * an empty cache each of them compiled the library on its own.
 */
'use strict';

const { createHash } = require('node:crypto');
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const { diskCache } = require('./disk-cache');
const SWC_OPTIONS = require('./swc-options');

const cached = diskCache('ts-cache');

/** What decides the output besides the file itself: the options and the installed SWC. */
const settingsKey = createHash('sha256')
  .update(JSON.stringify(SWC_OPTIONS))
  .update(readFileSync(require.resolve('@swc/core/package.json')))
  .digest('hex');

/** The JavaScript of TypeScript `source` (the text of `filename`), from the cache or compiled into it. */
function transpile(source, filename) {
  return cached(
    [settingsKey, filename, source],
    () => require('@swc/core').transformSync(source, { ...SWC_OPTIONS, filename }).code,
  );
}

/** Every TypeScript file under `dir`, recursively, but specs (children never load them). */
function childSources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : childSources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !entry.name.endsWith('.d.ts')
      ? [path]
      : [];
  });
}

/**
 * Compiles into the cache what the children load: the library and the example app (src), the
 * fixtures and the test support code. About a second of CPU from an empty cache. A file SWC cannot
 * compile is left out: the child that loads it reports the error.
 */
function warmTranspileCache(rootDir) {
  for (const dir of ['src', join('test', 'fixtures'), join('test', 'support')])
    for (const file of childSources(join(rootDir, dir))) {
      try {
        transpile(readFileSync(file, 'utf8'), file);
      } catch {
        // reported by the child that loads it
      }
    }
}

module.exports = { transpile, warmTranspileCache };
