#!/usr/bin/env bash
# The whole configured core in one Stryker run (npm run mutation), and one report of one commit:
# reports/mutation/run.json records the commit and whether the tree was clean when the run
# started (Stryker copies the tree then, so later edits do not change what it tests), and
# scripts/mutation-summary.js turns Stryker's JSON report into reports/mutation/summary.md and
# summary.json, with killed, timed out, survived, no coverage and compile errors per file.
# Concurrency 1 by default (MUTATION_CONCURRENCY changes it): on a shared 2-core machine more
# workers only make every mutant slower and turn slow kills into timeouts.
set -euo pipefail
cd "$(dirname "$0")/.."

mkdir -p reports/mutation
rm -f reports/mutation/mutation.json reports/mutation/summary.md reports/mutation/summary.json
commit=$(git rev-parse HEAD)
changes=$(git status --porcelain | wc -l)
concurrency="${MUTATION_CONCURRENCY:-1}"
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
cat > reports/mutation/run.json <<JSON
{ "commit": "$commit", "clean": $([ "$changes" -eq 0 ] && echo true || echo false), "changedPaths": $changes, "concurrency": $concurrency, "startedAt": "$started" }
JSON
echo "== mutation run of $commit ($([ "$changes" -eq 0 ] && echo clean || echo "$changes changed paths")), concurrency $concurrency, from $started"

status=0
npx stryker run --concurrency "$concurrency" "$@" || status=$?
node scripts/mutation-summary.js reports/mutation/run.json reports/mutation/mutation.json || status=$?
exit $status
