#!/usr/bin/env node
/**
 * What `npm publish` would publish, checked without publishing: runs `npm publish --dry-run`
 * (which runs the `prepare` script, so dist/mcp is built fresh, and packs the tarball it would
 * upload, but uploads nothing) and fails when:
 * - npm warns about the package (e.g. "npm auto-corrected some errors in your package.json", a
 *   field it normalized or dropped); only the dry run's own notice that no one is logged in is
 *   expected;
 * - package.json lacks a field the registry page and users need (description, license,
 *   repository, homepage, bugs, keywords, main, types, exports, files, engines, sideEffects);
 * - a file that should not ship is in the tarball (tests and specs, benchmarks, sources, the
 *   example app, build info, coverage, environment files, a source map without its module);
 * - a file package.json points at (main, types, exports, typesVersions, sideEffects) is not in it;
 * - package.json has a publish-time script besides prepare, prepack and postpack (prepublishOnly,
 *   publish, postpublish run on a real publish and are reviewed here first).
 *
 * Usage: `npm run publish:check` (prints the tarball's file count and size, then PASS or each
 * problem and FAIL). `node scripts/publish-check.js <dir>` checks the package in another directory.
 */
'use strict';

const { spawnSync } = require('node:child_process');
const { readFileSync } = require('node:fs');
const { join, resolve } = require('node:path');

const dir = resolve(process.argv[2] ?? join(__dirname, '..'));

/** npm's output lines that are expected from a dry run. */
const EXPECTED_WARNINGS = [/This command requires you to be logged in to .* \(dry-run\)/];

/** Fields package.json must have (a non-empty value). */
const REQUIRED_FIELDS = [
  'name',
  'version',
  'description',
  'license',
  'keywords',
  'homepage',
  'bugs',
  'repository',
  'main',
  'types',
  'exports',
  'files',
  'engines',
  'sideEffects',
];

/** Files that must not ship, with why. */
const FORBIDDEN = [
  [/(^|\/)[^/]*\.(spec|e2e-spec|test)\.[cm]?(js|ts)(\.map)?$/, 'a test or spec'],
  [/(^|\/)[^/]*\.spec\.d\.ts(\.map)?$/, 'a spec declaration'],
  [/^(test|tests|bench|src|coverage|reports|docs|scripts|api|\.ci)\//, 'not part of the package'],
  [/^dist\/(?!mcp\/)/, 'outside dist/mcp (the example app or another build)'],
  [/\.tsbuildinfo$/, 'TypeScript build info'],
  [/(^|\/)\.env(\..*)?$/, 'an environment file'],
  [/(^|\/)(tsconfig[^/]*|jest[^/]*\.config\.js|stryker\.config\.json)$/, 'build or test configuration'],
  [/\.tgz$/, 'a packed tarball'],
];

/** Scripts npm runs on publish; those not listed as allowed must be reviewed before they may exist. */
const PUBLISH_SCRIPTS = ['prepublish', 'prepublishOnly', 'prepack', 'prepare', 'postpack', 'publish', 'postpublish'];
const ALLOWED_PUBLISH_SCRIPTS = new Set(['prepare', 'prepack', 'postpack']);

/** The paths package.json points at: main, types, every exports and typesVersions target, sideEffects. */
function pointedAt(pkg) {
  const paths = [pkg.main, pkg.types, pkg.typings];
  const walk = (value) => {
    if (typeof value === 'string') paths.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(pkg.exports);
  walk(pkg.typesVersions);
  if (Array.isArray(pkg.sideEffects)) walk(pkg.sideEffects);
  return paths
    .filter((path) => typeof path === 'string' && !path.includes('*'))
    .map((path) => path.replace(/^\.\//, ''));
}

/** The publish-time scripts of package.json that this check has not allowed. */
function unreviewedScripts(pkg) {
  return PUBLISH_SCRIPTS.filter(
    (script) => pkg.scripts?.[script] !== undefined && !ALLOWED_PUBLISH_SCRIPTS.has(script),
  );
}

/** The problems of a package: its package.json, npm's warnings, and the tarball's file list. */
function problems(pkg, warnings, files) {
  const found = [];
  for (const field of REQUIRED_FIELDS) {
    const value = pkg[field];
    const empty =
      value === undefined ||
      value === '' ||
      (Array.isArray(value) && value.length === 0) ||
      (value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0);
    if (empty && value !== false) found.push(`package.json has no "${field}"`);
  }
  if (pkg.repository && typeof pkg.repository !== 'object')
    found.push('package.json "repository" is a string: npm rewrites it; give {"type": "git", "url": "git+https://…"}');
  for (const line of warnings) {
    if (!EXPECTED_WARNINGS.some((pattern) => pattern.test(line))) found.push(`npm: ${line}`);
  }
  const shipped = new Set(files);
  for (const file of files) {
    for (const [pattern, why] of FORBIDDEN) {
      if (pattern.test(file)) {
        found.push(`ships ${file} (${why})`);
        break;
      }
    }
    if (file.endsWith('.map') && !shipped.has(file.slice(0, -'.map'.length)))
      found.push(`ships ${file} without ${file.slice(0, -'.map'.length)}`);
  }
  for (const path of pointedAt(pkg)) {
    if (!shipped.has(path)) found.push(`package.json points at ${path}, which is not in the tarball`);
  }
  return found;
}

function main() {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  // A dry run still runs these (prepublishOnly too): refuse before npm runs anything.
  const unreviewed = unreviewedScripts(pkg);
  if (unreviewed.length) {
    for (const script of unreviewed)
      console.log(
        `publish-check: package.json has a "${script}" script, which npm runs on publish (and on this dry run): review it, then allow it in ALLOWED_PUBLISH_SCRIPTS`,
      );
    console.log('publish-check: FAIL (npm was not run)');
    return false;
  }
  const result = spawnSync('npm', ['publish', '--dry-run', '--json'], { cwd: dir, encoding: 'utf8' });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    console.log(result.stdout + result.stderr);
    console.log(`publish-check: FAIL (npm publish --dry-run exited with ${result.status})`);
    return false;
  }
  // stderr holds npm's log (and the prepare script's output goes to stdout before the JSON).
  const warnings = result.stderr
    .split('\n')
    .filter((line) => /^npm (warn|WARN|error|ERR!)/.test(line))
    .map((line) => line.replace(/^npm (warn|WARN|error|ERR!) ?/, ''));
  // The JSON report starts at a line of its own; the prepare script's output comes before it.
  const start = result.stdout.search(/^\{$/m);
  if (start < 0) throw new Error(`npm publish --dry-run --json printed no report:\n${result.stdout}`);
  const report = JSON.parse(result.stdout.slice(start));
  const tarball = report[pkg.name] ?? report;
  const files = tarball.files.map((file) => file.path);
  const found = problems(pkg, warnings, files);
  const kB = (bytes) => `${Math.round(bytes / 1000)} kB`;
  console.log(
    `publish-check: ${tarball.id}: ${files.length} files, ${kB(tarball.size)} packed, ${kB(tarball.unpackedSize)} unpacked`,
  );
  for (const problem of found) console.log(`publish-check: ${problem}`);
  console.log(`publish-check: ${found.length ? `FAIL (${found.length} problems)` : 'PASS'}`);
  return found.length === 0;
}

if (require.main === module) {
  try {
    process.exitCode = main() ? 0 : 1;
  } catch (error) {
    console.log(`publish-check: FAIL (${error instanceof Error ? error.message : error})`);
    process.exitCode = 1;
  }
}

module.exports = { problems, unreviewedScripts };
