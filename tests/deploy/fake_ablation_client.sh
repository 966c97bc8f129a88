#!/usr/bin/env bash
# TEST DOUBLE of ablation-client for tests/deploy/nightly_test.sh: installed as
# "ablation-client" in a folder put first on PATH. It keeps its runs in $FAKE_CLIENT_STATE/runs
# (one "ID STATE REGIME" line each, oldest first; a sweep's regime is its --regime, else
# sustained, the daemon's default) and logs every call to $FAKE_CLIENT_STATE/calls.
#   FAKE_SWEEP_RC=n       exit status of sweep (default 0); 2 adds no run
#   FAKE_SWEEP_STATE=s    state of the run a sweep adds (default succeeded)
#   FAKE_COMPARE_RC=n     exit status of compare (default 0)
#   FAKE_REPORT_RC=n      exit status of report (default 0)
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
    mapfile -t lines < <(tac "$state/runs")
    printf '{\n  "schema_version": 2,\n  "kind": "runs",\n  "truncated": false,\n  "items": [\n'
    for i in "${!lines[@]}"; do
      read -r id st regime <<<"${lines[$i]}"
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
      echo "$((${last:-0} + 1)) ${FAKE_SWEEP_STATE:-succeeded} $regime" >>"$state/runs"
    else
      echo "error: UNAVAILABLE: cannot reach the daemon" >&2
    fi
    exit "$rc"
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
