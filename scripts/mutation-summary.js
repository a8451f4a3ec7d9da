#!/usr/bin/env node
/**
 * Summarises one Stryker JSON report (reports/mutation/mutation.json) with the run record that
 * scripts/mutation.sh wrote before Stryker started: per mutated file, the killed, timed out,
 * survived, no-coverage and compile-error mutants, and the scores, into summary.md and
 * summary.json beside the report. Timeouts are counted apart from kills: Stryker's own score
 * adds them together, which hides a test that waits for ever behind a "kill".
 *
 * node scripts/mutation-summary.js [run.json] [mutation.json]
 */
const { readFileSync, writeFileSync, statSync } = require('node:fs');
const { dirname, join } = require('node:path');

const runPath = process.argv[2] ?? 'reports/mutation/run.json';
const reportPath = process.argv[3] ?? 'reports/mutation/mutation.json';
const run = JSON.parse(readFileSync(runPath, 'utf8'));
const started = Date.parse(run.startedAt);
const written = statSync(reportPath).mtime;
if (written.getTime() < started - 1000) {
  console.error(
    `${reportPath} was written at ${written.toISOString()}, before the run started (${run.startedAt}): not this run's report`,
  );
  process.exit(1);
}
const report = JSON.parse(readFileSync(reportPath, 'utf8'));

const columns = ['Killed', 'Timeout', 'Survived', 'NoCoverage', 'CompileError', 'RuntimeError', 'Ignored'];
const empty = () => Object.fromEntries(columns.map((status) => [status, 0]));
const rows = Object.entries(report.files)
  .map(([file, { mutants }]) => {
    const counts = empty();
    for (const mutant of mutants) counts[mutant.status] = (counts[mutant.status] ?? 0) + 1;
    return { file, ...counts };
  })
  .sort((a, b) => a.file.localeCompare(b.file));
const total = { file: 'all files', ...empty() };
for (const row of rows) for (const status of columns) total[status] += row[status];

/** Stryker's definitions: valid mutants leave out compile and runtime errors and ignored ones. */
function scores(row) {
  const detected = row.Killed + row.Timeout;
  const valid = detected + row.Survived + row.NoCoverage;
  const covered = valid - row.NoCoverage;
  const pct = (n, d) => (d === 0 ? null : Math.round((1000 * n) / d) / 10);
  return { valid, total: pct(detected, valid), covered: pct(detected, covered), killedOnly: pct(row.Killed, valid) };
}

const finished = written.toISOString().replace(/\.\d+Z$/, 'Z');
const minutes = Math.round((written.getTime() - started) / 60000);
const summary = {
  ...run,
  finishedAt: finished,
  minutes,
  files: rows.map((row) => ({ ...row, ...scores(row) })),
  total: { ...total, ...scores(total) },
};
writeFileSync(join(dirname(reportPath), 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);

const fmt = (value) => (value === null ? '-' : `${value.toFixed(1)} %`);
const line = (row) => {
  const s = scores(row);
  return `| ${row.file === 'all files' ? '**all files**' : `\`${row.file}\``} | ${s.valid} | ${row.Killed} | ${row.Timeout} | ${row.Survived} | ${row.NoCoverage} | ${row.CompileError} | ${fmt(s.killedOnly)} | ${fmt(s.total)} | ${fmt(s.covered)} |`;
};
const markdown = [
  `Mutation run of commit \`${run.commit}\` (${run.clean ? 'clean tree' : `tree NOT clean: ${run.changedPaths} changed paths`}), concurrency ${run.concurrency}, ${run.startedAt} to ${finished} (${minutes} min).`,
  '',
  "*Killed only* is killed / valid; *total* is (killed + timed out) / valid, Stryker's score; *covered* leaves out the mutants no test reaches. Compile errors count in none.",
  '',
  '| File | Valid | Killed | Timed out | Survived | No coverage | Compile errors | Killed only | Total | Covered |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...rows.map(line),
  line(total),
  '',
].join('\n');
writeFileSync(join(dirname(reportPath), 'summary.md'), markdown);
process.stdout.write(markdown);
