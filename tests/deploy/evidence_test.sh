#!/usr/bin/env bash
# scripts/evidence.sh: a folder of evidence/ prints its figures again from its databases (one
# test per folder, so that they run side by side), and the script fails where a figure is not
# printed (a planted line expecting what is not there, a database that does not exist).
#   evidence_test.sh SOURCE_DIR BIN_DIR FOLDER     reprints evidence/FOLDER
#   evidence_test.sh SOURCE_DIR BIN_DIR planted    the planted failures
set -uo pipefail
src=${1:?}
bin=${2:?}
what=${3:?usage: evidence_test.sh SOURCE_DIR BIN_DIR FOLDER|planted}
if [[ $what != planted ]]; then
  [[ -f $src/evidence/$what/COMMANDS ]] || { echo "FAIL: evidence/$what has no COMMANDS"; exit 1; }
  out=$("$src/scripts/evidence.sh" "$bin" "$src/evidence/$what" 2>&1)
  rc=$?
  echo "$out"
  [[ $rc -eq 0 ]] || { echo "FAIL: scripts/evidence.sh exit $rc over evidence/$what"; exit 1; }
  grep -q "^## " <<<"$out" || { echo "FAIL: no figure printed"; exit 1; }
  echo "PASS"
  exit 0
fi

planted=$(mktemp -d)
trap 'rm -rf "$planted"' EXIT
xz -c "$src/examples/h200-main-job/results.db" >"$planted/kept.db.xz"
printf 'kept.db.xz: runs => main-job\nkept.db.xz: runs => main-job\n' >"$planted/COMMANDS"
"$src/scripts/evidence.sh" "$bin" "$planted" >"$planted/out" 2>&1 ||
  { echo "FAIL: a compressed database was not read"; exit 1; }
grep -q "(the output above, of the same command)" "$planted/out" ||
  { echo "FAIL: the same command on the same database ran twice"; exit 1; }
printf 'kept.db.xz: runs => main-job\nkept.db.xz: runs => a figure nobody measured\n' \
  >"$planted/COMMANDS"
if "$src/scripts/evidence.sh" "$bin" "$planted" >"$planted/out" 2>&1; then
  echo "FAIL: a figure missing from a repeated command's output passed"; exit 1
fi
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
