/**
 * Jest's test sequencer for `npm test`: the longest suites first, by the durations committed in
 * suite-durations.json (seconds per suite, measured in whole `MCP_TEST_COVERAGE=1 npm test` runs).
 *
 * Jest's own sequencer orders by the durations of the previous run it keeps in its cache, and by
 * file size when it has none: a run from a clean clone (CI) has none, and file size says little
 * about an e2e suite (a short file that spawns processes or waits out a deadline can take ten times
 * longer than a long file of quick checks). With the long suites scheduled last, the run ends with
 * one worker still busy on them while the others have nothing left to take.
 *
 * Order: suites that failed in the previous run (Jest's cache, when there is one) first, as Jest
 * does; then by duration, longest first. A suite the file does not list yet takes the duration
 * Jest's cache has for it, and without one it goes first (it may be long, and a short suite at the
 * start costs nothing), as Jest runs new suites first. `node scripts/suite-durations.js` rewrites
 * the file from a run's `--json` output.
 */
'use strict';

const { readFileSync } = require('node:fs');
const { join, relative, sep } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const DURATIONS_FILE = join(__dirname, 'suite-durations.json');

function readDurations() {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')).suites ?? {};
  } catch {
    return {};
  }
}

class DurationSequencer extends Sequencer {
  durations = readDurations();

  /** The suite's path relative to its project's root, with forward slashes (the file's keys). */
  key(test) {
    return relative(test.context.config.rootDir, test.path).split(sep).join('/');
  }

  sort(tests) {
    const ranked = tests.map((test) => {
      const committed = this.durations[this.key(test)];
      // Jest's cache keeps milliseconds, the file seconds.
      const cached = this.time(test);
      const duration = committed !== undefined ? committed * 1000 : cached;
      return { test, failed: this.hasFailed(test), duration: duration ?? Infinity };
    });
    ranked.sort(
      (a, b) =>
        Number(b.failed) - Number(a.failed) ||
        (a.duration === b.duration ? 0 : b.duration > a.duration ? 1 : -1) ||
        (a.test.path < b.test.path ? -1 : a.test.path > b.test.path ? 1 : 0),
    );
    return ranked.map(({ test }) => test);
  }
}

module.exports = DurationSequencer;
