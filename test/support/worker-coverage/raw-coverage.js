/**
 * Coverage for `MCP_TEST_COVERAGE=1 npm test`, collected once per Jest worker instead of once per
 * suite.
 *
 * Jest's `--coverage` copies the whole coverage object of every loaded file (the statement, function
 * and branch maps with their counters) at the end of every suite, sends the copy to the main process
 * and merges it there: with a few hundred files loaded by each of three hundred suites, that work
 * cost the suite more CPU than the instrumented code itself. Here the files are instrumented the
 * same way (instrumenting-transformer.js), but each worker adds a suite's counters into its own
 * running totals (coverage.environment.js) and writes them to a file; the maps are written once per
 * worker and file. At the end of the run coverage-reporter.js merges the workers' files, adds the
 * files no suite loaded, maps everything back to the TypeScript and prints the same summary, with
 * the same thresholds, as Jest would.
 */
'use strict';

const { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join, relative, sep } = require('node:path');
const { diskCache } = require('../disk-cache');

/** The run's directory of raw coverage files (set by jest.config.js before the workers start). */
const RAW_DIR_VARIABLE = 'MCP_TEST_COVERAGE_RAW_DIR';

/** The library's files that count: src/mcp/**\/*.ts, without specs and index files. */
function coveredFile(filename, rootDir) {
  const path = relative(rootDir, filename).split(sep).join('/');
  return (
    path.startsWith('src/mcp/') && path.endsWith('.ts') && !path.endsWith('.spec.ts') && !path.endsWith('/index.ts')
  );
}

/** Every file under `dir`, recursively. */
function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** The library's files that count (see `coveredFile`), every one under `rootDir`. */
function coveredFiles(rootDir) {
  return walk(join(rootDir, 'src', 'mcp')).filter((file) => coveredFile(file, rootDir));
}

/**
 * Where instrumented files are kept between processes and runs (../disk-cache.js): Istanbul's
 * instrumentation (Babel, about 25 ms of CPU a file) is the costly part of compiling a library file
 * for a suite, and Jest's own transform cache keeps one copy per project (unit, e2e, e2e-serial)
 * written by whichever of the workers gets there first, so a run that starts from an empty cache
 * instrumented each file several times over.
 */
const instrumentedCache = diskCache('coverage-cache');

let instrumenterKey;

/** What decides the instrumented output besides the input: the installed Babel and Istanbul. */
function instrumenterVersions() {
  instrumenterKey ??= ['@babel/core', 'babel-plugin-istanbul', 'istanbul-lib-instrument']
    .map((name) => require(`${name}/package.json`).version)
    .join(' ');
  return instrumenterKey;
}

/**
 * Istanbul's instrumentation of a transformed file, as Jest's own `--coverage` does it, kept in
 * the cache of instrumented files. Its entry is found by the file's absolute path and the root
 * (both are written into the output), its text and source map, and the instrumenter.
 */
function instrument(transformed, filename, rootDir) {
  if (!coveredFile(filename, rootDir)) return transformed;
  const code = typeof transformed === 'string' ? transformed : transformed.code;
  const inputMap = typeof transformed === 'string' ? null : transformed.map;
  const map = inputMap == null ? '' : typeof inputMap === 'string' ? inputMap : JSON.stringify(inputMap);
  return JSON.parse(
    instrumentedCache([instrumenterVersions(), filename, rootDir, code, map], () =>
      JSON.stringify(instrumentNow(transformed, code, inputMap, filename, rootDir)),
    ),
  );
}

function instrumentNow(transformed, code, inputMap, filename, rootDir) {
  const { transformSync } = require('@babel/core');
  const babelPluginIstanbul = require('babel-plugin-istanbul').default;
  const { fromSource } = require('convert-source-map');
  let map = inputMap;
  if (map == null || map === '') map = fromSource(code)?.toObject() ?? null;
  const result = transformSync(code, {
    auxiliaryCommentBefore: ' istanbul ignore next ',
    babelrc: false,
    configFile: false,
    filename,
    plugins: [
      [
        babelPluginIstanbul,
        {
          compact: false,
          cwd: rootDir,
          exclude: [],
          extension: false,
          inputSourceMap: map,
          useInlineSourceMaps: false,
        },
      ],
    ],
    sourceMaps: map ? 'both' : false,
  });
  return result?.code != null ? { code: result.code, map: result.map ?? null } : transformed;
}

/** One worker's running totals: per file, its first coverage object (maps) and the summed counters. */
class RawCoverage {
  constructor(dir) {
    this.dir = dir;
    this.files = new Map();
    this.unwrittenMaps = [];
    this.mapsWritten = 0;
  }

  /** Adds one suite's coverage object (the `__coverage__` global of its context). */
  add(coverage) {
    for (const [path, data] of Object.entries(coverage)) {
      const key = `${path}\0${data.hash}`;
      const kept = this.files.get(key);
      if (!kept) {
        const copy = structuredClone(data);
        this.files.set(key, copy);
        this.unwrittenMaps.push(copy);
        continue;
      }
      for (const id in data.s) kept.s[id] += data.s[id];
      for (const id in data.f) kept.f[id] += data.f[id];
      for (const id in data.b) {
        const counts = data.b[id];
        const into = kept.b[id];
        for (let i = 0; i < counts.length; i++) into[i] += counts[i];
      }
    }
  }

  /** Writes the totals: the maps of files new since the last write, and every file's counters. */
  write() {
    mkdirSync(this.dir, { recursive: true });
    if (this.unwrittenMaps.length) {
      const maps = this.unwrittenMaps.map((data) => ({ ...data, s: undefined, f: undefined, b: undefined }));
      writeFileSync(join(this.dir, `${process.pid}.maps.${this.mapsWritten++}.json`), JSON.stringify(maps));
      this.unwrittenMaps = [];
    }
    const counters = [];
    for (const data of this.files.values()) counters.push([data.path, data.hash, data.s, data.f, data.b]);
    writeFileSync(join(this.dir, `${process.pid}.counters.json`), JSON.stringify(counters));
  }
}

/** Every worker's coverage objects, read back from `dir`: full Istanbul file coverage data. */
function readRawCoverage(dir) {
  if (!existsSync(dir)) return [];
  const names = readdirSync(dir);
  const objects = [];
  for (const name of names.filter((n) => n.endsWith('.counters.json'))) {
    const pid = name.slice(0, -'.counters.json'.length);
    const maps = new Map();
    for (const mapsName of names.filter((n) => n.startsWith(`${pid}.maps.`)))
      for (const data of JSON.parse(readFileSync(join(dir, mapsName), 'utf8')))
        maps.set(`${data.path}\0${data.hash}`, data);
    for (const [path, hash, s, f, b] of JSON.parse(readFileSync(join(dir, name), 'utf8'))) {
      const data = maps.get(`${path}\0${hash}`);
      if (data) objects.push({ ...data, s, f, b });
    }
  }
  return objects;
}

module.exports = { RAW_DIR_VARIABLE, RawCoverage, coveredFiles, instrument, readRawCoverage };
