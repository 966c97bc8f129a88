#!/usr/bin/env bash
# The power regimes' figures on a GPU, in phases that each fit one device call, over a bundle made
# by deploy/make-bundle.sh build/default bundle <test binaries>. Observe mode only: nothing here
# locks a clock or changes a GPU setting (the locked regime is tested against the stand-in NVML).
#   scripts/regime-session.sh BUNDLE OUT PHASE...
# Phases:
#   tests            the worker's and the daemon's GPU tests (each bounded)
#   ladders-REGIME   three separate runs each of ladder-h, ladder-a and ladder-b in REGIME
#                    (sustained or burst), 3 rounds each, with their reports (md, json);
#                    LADDERS="ladder-h" chooses the ladders, SWEEP_ARGS="--window-seconds 6"
#                    adds options to every sweep, CONFIG=FILE gives the daemon a configuration
#                    (for example a stricter settle rule: [timing] settle_*)
#   full-REGIME      the full preset in REGIME, one round: its wall time against its sampled GPU
#                    time (the run_cost view)
#   cublas           the daemon's cuBLAS bf16 4096^3 in each regime (3 rounds, unpaired), and
#                    scripts/independent-cublas.py beside it
# Each phase appends to OUT/session.log; the databases stay in OUT.
set -uo pipefail
bundle=$(cd "${1:?usage: regime-session.sh BUNDLE OUT PHASE...}" && pwd)
out=${2:?usage: regime-session.sh BUNDLE OUT PHASE...}
shift 2
port=50055
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/session-common.sh
. "$here/session-common.sh"
cost_of() {  # cost_of DB RUN: the run_cost view's row
  python3 - "$1" "$2" <<'PY'
import sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
cur = con.execute("SELECT * FROM run_cost WHERE run_id = ?", (int(sys.argv[2]),))
row = cur.fetchone()
print("; ".join(f"{d[0]} {v if not isinstance(v, float) else round(v, 3)}"
                for d, v in zip(cur.description, row)))
PY
}

say "GPU $(nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,power.draw,power.limit,temperature.gpu --format=csv,noheader)"
for phase in "$@"; do
  case $phase in
    tests)
      for t in worker_gpu_tests gpu_e2e_tests; do
        [[ -x $bundle/bin/$t ]] || { say "$t: not in the bundle"; continue; }
        timeout 240 "$bundle/bin/$t" --gtest_brief=1 >"$out/$t.log" 2>&1
        say "$t exit $? ($(elapsed)): $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$t.log" | tr '\n' ' ')"
      done
      ;;
    ladders-sustained | ladders-burst)
      regime=${phase#ladders-}
      start_daemon "$out/ladders-$regime.db" || continue
      for i in 1 2 3; do
        for ladder in ${LADDERS:-ladder-h ladder-a ladder-b}; do
          t0=$(date +%s)
          # shellcheck disable=SC2086 # SWEEP_ARGS is a list of options
          c -q sweep --preset "$ladder" --rounds 3 --regime "$regime" --tag "$ladder-$regime-$i" \
            ${SWEEP_ARGS:-} >>"$log" 2>&1
          id=$(latest)
          c report "$id" --format md >"$out/$ladder-$regime-$i.md" 2>>"$log"
          c report "$id" --format json >"$out/$ladder-$regime-$i.json" 2>>"$log"
          say "$ladder $regime run $i: run $id, $(($(date +%s) - t0)) s ($(elapsed))"
        done
      done
      stop_daemon
      ;;
    full-sustained | full-burst)
      regime=${phase#full-}
      start_daemon "$out/full-$regime.db" || continue
      t0=$(date +%s.%N)
      c -q sweep --preset full --rounds 1 --regime "$regime" --tag "full-$regime" >>"$log" 2>&1
      t1=$(date +%s.%N)
      id=$(latest)
      c report "$id" --format md >"$out/full-$regime.md" 2>>"$log"
      say "full $regime: $(awk "BEGIN{print $t1 - $t0}") s of wall time for run $id ($(elapsed))"
      say "run_cost: $(cost_of "$out/full-$regime.db" "$id")"
      stop_daemon
      ;;
    cublas)
      start_daemon "$out/cublas.db" || continue
      for regime in burst sustained; do
        c -q run -v cublas_bf16 --shape 4096 --rounds 3 --regime "$regime" \
          --tag "cublas-$regime" --width 0 >"$out/cublas-$regime.txt" 2>>"$log"
        say "daemon cublas_bf16 4096^3 $regime (run $(latest)):"
        tee -a "$log" <"$out/cublas-$regime.txt"
      done
      stop_daemon
      python3 "$here/independent-cublas.py" 4096 --json "$out/independent-cublas.json" 2>&1 | tee -a "$log"
      ;;
    *) say "unknown phase $phase" ;;
  esac
done
say "done ($(elapsed))"
