#!/usr/bin/env bash
# TEST DOUBLE of ablation-client for tests/deploy/nightly_test.sh: installed as
# "ablation-client" in a folder put first on PATH. It keeps its runs in $FAKE_CLIENT_STATE/runs
# (one "ID STATE REGIME TAG" line each, oldest first; a sweep's regime is its --regime, else
# sustained, the daemon's default; a sweep's tag is nightly, a run's its --tag) and logs every
# call to $FAKE_CLIENT_STATE/calls.
#   FAKE_SWEEP_RC=n       exit status of sweep (default 0); 2 adds no run
#   FAKE_SWEEP_STATE=s    state of the run a sweep adds (default succeeded)
#   FAKE_COMPARE_RC=n     exit status of compare (default 0)
#   FAKE_REPORT_RC=n      exit status of report (default 0)
#   FAKE_CANDIDATE="VARIANT DTYPE M N K BASELINE_MS TONIGHT_MS"  history * --in-run N answers one
#                         series of 5 nights at BASELINE_MS then run N at TONIGHT_MS, a candidate
#                         when TONIGHT_MS is 3 % or more slower (threshold 0.03); unset: no series
#   FAKE_RERUN_MEDIAN=ms  the median of a rerun (run), as history --in-run RERUN reports it (default:
#                         BASELINE_MS)
#   FAKE_RUN_RC=n         exit status of run (default 0; non-zero adds no run)
set -euo pipefail
state=${FAKE_CLIENT_STATE:?FAKE_CLIENT_STATE not set}
touch "$state/runs"
echo "server=${ABLATION_SERVER:-} $*" >>"$state/calls"
while [[ $# -gt 0 && $1 == -* ]]; do shift; done  # global flags (-q)
cmd=${1:?no subcommand}
shift
case $cmd in
  runs)
    [[ "$*" == *"--format json"* ]] || { echo "fake: runs wants --format json" >&2; exit 2; }
    tag=nightly
    [[ "$*" =~ --tag\ ([^ ]+) ]] && tag=${BASH_REMATCH[1]}
    # As the real client prints it: the envelope, runs newest first, one object per line, int64
    # as strings, the state and the regime in the database's words (succeeded, burst).
    mapfile -t lines < <(tac "$state/runs" | awk -v t="$tag" '($4 == "" ? "nightly" : $4) == t')
    printf '{\n  "schema_version": 2,\n  "kind": "runs",\n  "truncated": false,\n  "items": [\n'
    for i in "${!lines[@]}"; do
      read -r id st regime _ <<<"${lines[$i]}"
      sep=","
      ((i + 1 == ${#lines[@]})) && sep=""
      printf '    {"id":"%s","state":"%s","regime":"%s","device":{"name":"Fake GPU"},"tags":["%s"],"planned":4,"ok":4}%s\n' \
        "$id" "$st" "$regime" "$tag" "$sep"
    done
    printf '  ]\n}\n'
    ;;
  sweep)
    rc=${FAKE_SWEEP_RC:-0}
    regime=sustained
    [[ "$*" =~ --regime\ ([^ ]+) ]] && regime=${BASH_REMATCH[1]}
    if [[ $rc != 2 ]]; then
      last=$(tail -n1 "$state/runs" | cut -d' ' -f1)
      echo "$((${last:-0} + 1)) ${FAKE_SWEEP_STATE:-succeeded} $regime nightly" >>"$state/runs"
    else
      echo "error: UNAVAILABLE: cannot reach the daemon" >&2
    fi
    exit "$rc"
    ;;
  run)
    rc=${FAKE_RUN_RC:-0}
    regime=sustained
    [[ "$*" =~ --regime\ ([^ ]+) ]] && regime=${BASH_REMATCH[1]}
    [[ "$*" =~ --tag\ ([^ ]+) ]] || { echo "fake: run without --tag" >&2; exit 2; }
    tag=${BASH_REMATCH[1]}
    if [[ $rc == 0 ]]; then
      last=$(tail -n1 "$state/runs" | cut -d' ' -f1)
      echo "$((${last:-0} + 1)) succeeded $regime $tag" >>"$state/runs"
    fi
    exit "$rc"
    ;;
  history)
    [[ "$*" == *"--format json"* ]] || { echo "fake: history wants --format json" >&2; exit 2; }
    [[ "$*" =~ --in-run\ ([0-9]+) ]] || { echo "fake: history without --in-run" >&2; exit 2; }
    run=${BASH_REMATCH[1]}
    printf '{\n  "schema_version": 2,\n  "kind": "history",\n  "min_relative_change": "0.01",\n  "significance": "0.01",\n  "items": [\n'
    if [[ -n ${FAKE_CANDIDATE:-} ]]; then
      read -r variant dtype m n k base tonight <<<"$FAKE_CANDIDATE"
      series='{"hardware_fingerprint":"00fa4e00fa4e00fa","variant":"%s","dtype":"%s","shape":{"m":"%s","n":"%s","k":"%s"},"regime":"sustained","device_name":"Fake GPU","device_uuid":"GPU-fake","points":[%s],"change_points":[],"newest":%s}\n'
      if [[ $1 == '*' ]]; then
        points=""
        for i in 1 2 3 4 5; do points+="{\"run_id\":\"$((100 + i))\",\"median_ms\":$base,\"noise\":0.001,\"tflops\":100,\"change_point\":false},"; done
        points+="{\"run_id\":\"$run\",\"median_ms\":$tonight,\"noise\":0.001,\"tflops\":90,\"change_point\":false}"
        change=$(awk -v a="$tonight" -v b="$base" 'BEGIN { printf "%.6f", a / b - 1 }')
        candidate=$(awk -v c="$change" 'BEGIN { print (c >= 0.03 || c <= -0.03) ? "true" : "false" }')
        newest="{\"candidate\":$candidate,\"baseline_median_ms\":$base,\"relative_change\":$change,\"threshold\":0.03,\"baseline_points\":5}"
      else
        points="{\"run_id\":\"$run\",\"median_ms\":${FAKE_RERUN_MEDIAN:-$base},\"noise\":0.001,\"tflops\":100,\"change_point\":false}"
        newest='{"candidate":false,"baseline_median_ms":0,"relative_change":0,"threshold":0.03,"baseline_points":0}'
      fi
      # shellcheck disable=SC2059 # the format is ours
      printf "    $series" "$variant" "$dtype" "$m" "$n" "$k" "$points" "$newest"
    fi
    printf '  ]\n}\n'
    ;;
  compare)
    echo "fake compare of run $1 (baseline) with run $2"
    exit "${FAKE_COMPARE_RC:-0}"
    ;;
  report)
    # The run is the argument (`report 7`); the deprecated `--run 7` would be refused here.
    [[ $1 =~ ^[0-9]+$ ]] || { echo "fake: report wants the run as its argument, got '$1'" >&2; exit 2; }
    echo "<!DOCTYPE html><html><body>fake report of run $1</body></html>"
    exit "${FAKE_REPORT_RC:-0}"
    ;;
  *)
    echo "fake: unknown subcommand $cmd" >&2
    exit 2
    ;;
esac
