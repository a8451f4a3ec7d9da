/**
 * The reporter of `MCP_TEST_COVERAGE=1 npm test`: at the end of the run it merges the workers' raw
 * coverage (raw-coverage.js), adds the library files no suite loaded (all counters zero, as Jest's
 * `--coverage` does), maps the result back to the TypeScript through the source maps, prints Jest's
 * text summary, writes coverage/coverage-summary.json and fails the run under the thresholds.
 *
 * Options (jest.config.js): `thresholds` ({ lines, branches, statements, functions }, percentages of
 * the whole library), `swc` (the `@swc/jest` options the suites' TypeScript is compiled with).
 */
'use strict';

const { readFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const libCoverage = require('istanbul-lib-coverage');
const libReport = require('istanbul-lib-report');
const libSourceMaps = require('istanbul-lib-source-maps');
const reports = require('istanbul-reports');
const { readInitialCoverage } = require('istanbul-lib-instrument');
const swcJest = require('@swc/jest');
const { RAW_DIR_VARIABLE, coveredFiles, instrument, readRawCoverage } = require('./raw-coverage');

class WorkerCoverageReporter {
  constructor(globalConfig, options = {}) {
    this.rootDir = globalConfig.rootDir;
    this.directory = globalConfig.coverageDirectory || join(globalConfig.rootDir, 'coverage');
    this.thresholds = options.thresholds ?? {};
    this.swc = options.swc ?? {};
    this.error = undefined;
  }

  async onRunComplete() {
    const raw = process.env[RAW_DIR_VARIABLE];
    try {
      const map = libCoverage.createCoverageMap({});
      for (const data of readRawCoverage(raw)) map.merge({ [data.path]: data });
      this.addUnloadedFiles(map);
      const store = libSourceMaps.createSourceMapStore();
      const mapped = await store.transformCoverage(map);
      const context = libReport.createContext({
        coverageMap: mapped,
        dir: this.directory,
        sourceFinder: store.sourceFinder,
      });
      for (const name of ['text-summary', 'json-summary']) reports.create(name).execute(context);
      this.check(mapped.getCoverageSummary());
    } catch (error) {
      this.error = new Error(`Coverage could not be reported: ${error?.stack ?? error}`);
    } finally {
      if (raw) rmSync(raw, { recursive: true, force: true });
    }
  }

  /** The library's files that no suite loaded, with every counter zero. */
  addUnloadedFiles(map) {
    const loaded = new Set(map.files());
    const swc = swcJest.createTransformer(this.swc);
    for (const file of coveredFiles(this.rootDir)) {
      if (loaded.has(file)) continue;
      const source = readFileSync(file, 'utf8');
      // As Jest's `--coverage` counts a file no suite loaded: compiled as an ES module.
      const jestOptions = { config: { rootDir: this.rootDir }, supportsStaticESM: true };
      const { code } = instrument(swc.process(source, file, jestOptions), file, this.rootDir);
      const initial = readInitialCoverage(code);
      if (initial) map.addFileCoverage(initial.coverageData);
    }
  }

  /** Fails the run when a measure of the whole library is under its threshold. */
  check(summary) {
    const failures = [];
    for (const key of ['statements', 'branches', 'lines', 'functions']) {
      const threshold = this.thresholds[key];
      if (threshold === undefined) continue;
      const actual = summary[key].pct;
      if (actual < threshold)
        failures.push(`Coverage for ${key} (${actual}%) does not meet the threshold (${threshold}%)`);
    }
    if (failures.length) {
      process.stderr.write(`${failures.join('\n')}\n`);
      this.error = new Error(failures.join('\n'));
    }
  }

  getLastError() {
    return this.error;
  }
}

module.exports = WorkerCoverageReporter;
