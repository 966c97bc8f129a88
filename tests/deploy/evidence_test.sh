#!/usr/bin/env bash
# scripts/evidence.sh: every folder of evidence/ prints its figures again from its databases, and
# the script fails where a figure is not printed (a planted line expecting what is not there, a
# database that does not exist).
#   evidence_test.sh SOURCE_DIR BIN_DIR
set -uo pipefail
src=${1:?}
bin=${2:?}
out=$("$src/scripts/evidence.sh" "$bin" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 0 ]] || { echo "FAIL: scripts/evidence.sh exit $rc over evidence/"; exit 1; }
grep -q "^## " <<<"$out" || { echo "FAIL: no figure printed"; exit 1; }

planted=$(mktemp -d)
trap 'rm -rf "$planted"' EXIT
xz -c "$src/examples/h200-main-job/results.db" >"$planted/kept.db.xz"
printf 'kept.db.xz: runs => main-job\n' >"$planted/COMMANDS"
"$src/scripts/evidence.sh" "$bin" "$planted" >/dev/null 2>&1 ||
  { echo "FAIL: a compressed database was not read"; exit 1; }
printf 'kept.db.xz: runs => a figure nobody measured\n' >"$planted/COMMANDS"
if "$src/scripts/evidence.sh" "$bin" "$planted" >"$planted/out" 2>&1; then
  echo "FAIL: a line whose expected text is missing passed"; exit 1
fi
grep -q "no 'a figure nobody measured' in the output" "$planted/out" || { cat "$planted/out"; exit 1; }
printf 'gone.db.xz: runs\n' >"$planted/COMMANDS"
if "$src/scripts/evidence.sh" "$bin" "$planted" >/dev/null 2>&1; then
  echo "FAIL: a missing database passed"; exit 1
fi
echo "PASS"
