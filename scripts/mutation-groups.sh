#!/usr/bin/env bash
# Mutation testing one file group at a time (npm run mutation:groups [group...]): each group is
# its own Stryker run against only its own specs, with its own incremental file, and leaves its
# JSON report in reports/mutation/<group>.json. On a busy machine a whole-scope run (npm run
# mutation) may not finish in one sitting; groups that did finish keep their results, and a
# re-run only re-tests what changed. Groups: queue codec stdio persistence toolset protocol.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A MUTATE SPECS
MUTATE[queue]='src/mcp/client/queue/**/*.ts,!src/mcp/client/queue/**/*.spec.ts'
SPECS[queue]='src/mcp/client/queue/*.spec.ts'
MUTATE[codec]='src/mcp/server/stateless/request-state-codec.ts'
SPECS[codec]='src/mcp/server/stateless/request-state-codec*.spec.ts'
MUTATE[stdio]='src/mcp/client/transports/stdio/stdio-deadline.ts,src/mcp/client/transports/stdio/stdio-process.ts'
SPECS[stdio]='src/mcp/client/transports/stdio/stdio-deadline.spec.ts,src/mcp/client/transports/stdio/stdio-process.spec.ts,src/mcp/client/transports/stdio/stdio-handshake.spec.ts'
MUTATE[persistence]='src/mcp/persistence/group-committer.ts,src/mcp/persistence/typeorm/entity-sql.ts'
SPECS[persistence]='src/mcp/persistence/group-committer.spec.ts,src/mcp/persistence/typeorm/entity-sql.spec.ts'
MUTATE[toolset]='src/mcp/server/dispatch/*.ts,!src/mcp/server/dispatch/*.spec.ts'
SPECS[toolset]='src/mcp/server/dispatch/toolset.spec.ts,src/mcp/server/dispatch/toolset.tasks.spec.ts,src/mcp/server/toolset.explorer.spec.ts'
MUTATE[protocol]='src/mcp/protocol/**/*.ts,!src/mcp/protocol/**/*.spec.ts,!src/mcp/protocol/index.ts'
SPECS[protocol]='src/mcp/protocol/*.spec.ts,src/mcp/server/stateless/*.spec.ts'

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(queue codec stdio persistence toolset protocol)
mkdir -p reports/mutation
for group in "${groups[@]}"; do
  [ -n "${MUTATE[$group]:-}" ] || { echo "unknown group: $group" >&2; exit 2; }
  echo "== mutation group $group ($(date -u +%H:%M:%S))"
  start=$(date +%s)
  MUTATION_SPECS="${SPECS[$group]}" npx stryker run --concurrency "${MUTATION_CONCURRENCY:-1}" \
    --mutate "${MUTATE[$group]}" --incremental --incrementalFile "reports/stryker-incremental-$group.json"
  cp reports/mutation/mutation.json "reports/mutation/$group.json"
  echo "== mutation group $group took $(( $(date +%s) - start )) s"
done
