/**
 * Prints one plain closing line, `tests: N passed, N failed, N skipped`, after Jest's own summary,
 * so tools that read the end of a run see the totals.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = `tests: ${results.numPassedTests} passed, ${failed} failed, ${skipped} skipped\n`;
    // Written on exit so that it comes after Jest's own summary.
    process.once('exit', () => process.stderr.write(line));
  }
}

module.exports = SummaryReporter;
