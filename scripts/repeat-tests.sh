#!/usr/bin/env bash
# Runs `npm test` N times in a row (default 20) to show the suite is stable. Prints one line per
# run and a summary; stops at the first failing run and keeps its full log. Exit status: 0 when
# every run passed, 1 otherwise, 2 for a bad argument.
#
#   scripts/repeat-tests.sh 20
#   PXL_REPEAT_LOGS=/tmp/runs scripts/repeat-tests.sh 5    # where the logs go (default: a temp dir)
set -uo pipefail
cd "$(dirname "$0")/.."

runs="${1:-20}"
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/repeat-tests.sh [N]: N must be a positive integer, got '$runs'" >&2
  exit 2
fi
logs="${PXL_REPEAT_LOGS:-$(mktemp -d "${TMPDIR:-/tmp}/pxl-repeat-XXXXXX")}"
mkdir -p "$logs"

passed=0
for ((i = 1; i <= runs; i++)); do
  log="$logs/run-$i.log"
  start=$SECONDS
  if npm test >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "run $i/$runs: passed ($((SECONDS - start)) s)"
    rm -f "$log"
  else
    echo "run $i/$runs: FAILED ($((SECONDS - start)) s); log kept at $log"
    grep -E '(FAIL|×) ' "$log" | head -20
    echo "$passed passed, 1 failed, $((runs - i)) not run"
    exit 1
  fi
done
echo "$passed passed, 0 failed"
rmdir "$logs" 2>/dev/null || true
