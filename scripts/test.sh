#!/usr/bin/env bash
# Sets up (Debian packages, configure, build) and runs every test. GPU tests (ctest label gpu)
# skip themselves, saying why, where there is no CUDA device; the reasons are summed up at the end
# (ctest itself prints only "Skipped"). Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default -j"$(nproc)"
status=0
ctest --preset default "$@" || status=$?
# Each skipped test's reason is the line after gtest's "...: Skipped" in ctest's log.
log=build/default/Testing/Temporary/LastTest.log
if [[ -f $log ]]; then
  reasons=$(awk '/: Skipped$/ { getline; print }' "$log" | sort | uniq -c | sort -rn)
  if [[ -n $reasons ]]; then
    echo
    echo "Skipped tests, by reason (count, reason):"
    echo "$reasons" | sed 's/^/  /'
  fi
fi
exit "$status"
