#!/usr/bin/env bash
# The main job on already built binaries (also used from a relocatable bundle on a GPU node):
#   scripts/demo.sh BIN_DIR [SHAPE]
# Starts ablationd on loopback with a local SQLite file, sweeps the presets ladder-a and ladder-b
# at SHAPE (default 4096^3; 3 rounds each, the presets' default) and ends with the answer: each
# ladder's rungs with their change and 95% interval (`ablation-client report --format md` of the
# two runs) and the paths of the HTML reports it wrote. Without a GPU it says so and shows the
# service answering instead.
# Environment: ABLATION_PORT (50051), ABLATION_DB, ABLATION_LOG, ABLATION_REPORT_DIR (.).
set -euo pipefail
bin=${1:?usage: demo.sh BIN_DIR [SHAPE]}
shape=${2:-4096x4096x4096}
port=${ABLATION_PORT:-50051}
db=${ABLATION_DB:-ablationd-results.db}
log=${ABLATION_LOG:-ablationd.log}
report_dir=${ABLATION_REPORT_DIR:-.}
server=127.0.0.1:$port

"$bin/ablationd" --listen "$server" --db "$db" >"$log" 2>&1 &
daemon=$!
trap 'kill -TERM $daemon 2>/dev/null; wait $daemon 2>/dev/null || true' EXIT
client() { "$bin/ablation-client" --server "$server" "$@"; }

for _ in $(seq 1 600); do
  if client device >/dev/null 2>&1; then break; fi
  if ! kill -0 $daemon 2>/dev/null; then echo "ablationd failed to start:"; cat "$log"; exit 1; fi
  sleep 0.2
done

echo "== ablationd on $server, results in $db (log: $log)"
echo "== device"
client device

# Prints the section of a report (markdown) whose heading names the ladder: "## 2. Ladder A: ...".
section() {
  awk -v want="$1" '
    /^## / { inside = index($0, want) > 0 }
    inside { print }' <<<"$2"
}

# Prints the ladder section of run $2's report (preset $1), read through the client function $3.
# A report without that heading (the preset's title changed): the whole report, not nothing.
answer() {
  local preset=$1 id=$2 via=$3 md text title
  case $preset in ladder-a) title="Ladder A" ;; *) title="Ladder B" ;; esac
  md=$("$via" report "$id" --format md)
  echo
  echo "run $id (preset $preset):"
  echo
  text=$(section "$title" "$md")
  if [[ -n $text ]]; then echo "$text"; else echo "$md"; fi
}

# Sweeps one preset; its run is the newest (this script's own daemon makes no other). Prints the
# run id on stdout; progress goes to stderr.
sweep() {
  local status=0
  client sweep --preset "$1" --shape "$shape" --tag main-job --tag "$1" >&2 || status=$?
  # 1: the run ended with failed measurements; its report says which. Anything else: no run.
  if ((status > 1)); then
    echo "ablation-client sweep --preset $1 failed (exit $status)" >&2
    return 1
  fi
  client runs --limit 1 --format csv | awk -F, 'NR == 2 { print $1 }'
}

if client device --format json | grep -q '"available": *true'; then
  mkdir -p "$report_dir"
  declare -A runs=()
  for preset in ladder-a ladder-b; do
    echo "== sweeping $preset at $shape (bf16, L2 cold, 3 rounds in shuffled orders)"
    runs[$preset]=$(sweep "$preset")
  done
  reports=()
  for preset in ladder-a ladder-b; do
    html="$report_dir/main-job-$preset-run${runs[$preset]}.html"
    client report "${runs[$preset]}" --format html -o "$html"
    reports+=("$(realpath "$html")")
  done
  echo
  echo "== the answer: ladders A and B at $shape"
  for preset in ladder-a ladder-b; do answer "$preset" "${runs[$preset]}" client; done
  echo
  echo "HTML reports written:"
  printf '  %s\n' "${reports[@]}"
else
  echo "== no GPU here: the daemon serves queries but refuses runs, as it should; the ladders A"
  echo "   and B at $shape need a GPU (on a GPU node: scripts/demo.sh on a bundle, deploy/README.md)"
  client run --variant L0_R1_s1 --shape "$shape" || true
  echo "== variants (first 10 of $(client variants --format csv | tail -n +2 | wc -l))"
  client variants | sed -n '1,11p'  # sed reads it all: no SIGPIPE under pipefail
  echo "== presets: the ladders a GPU would sweep"
  client presets | awk 'NR <= 2 || /^ladder-[ab] /'
  if metrics=$(grep -o 'metrics on http://[^ ]*' "$log"); then
    url=${metrics#metrics on }
    echo "== Prometheus metrics at $url"
    if command -v curl >/dev/null; then
      curl -fsS "$url" | grep -E '^ablationd_(gpu_usable|queue_length|runs_total\{kind="ablation",state="(succeeded|failed)"\})' || true
    fi
  fi
  # What the answer looks like: a real main job on an H200, kept in the repository as data (its
  # database, examples/h200-main-job/), read by a second daemon of this build from a copy and
  # rendered by this client. Never numbers made up for the occasion.
  kept=$(dirname "$0")/../examples/h200-main-job
  if [[ -f $kept/results.db ]]; then
    copy=$(mktemp -d)
    cp "$kept/results.db" "$copy/results.db"
    kept_server=127.0.0.1:$((port + 1))
    "$bin/ablationd" --listen "$kept_server" --db "$copy/results.db" >"$copy/ablationd.log" 2>&1 &
    kept_daemon=$!
    trap 'kill -TERM $daemon $kept_daemon 2>/dev/null; wait $daemon $kept_daemon 2>/dev/null || true; rm -rf "$copy"' EXIT
    kept_client() { "$bin/ablation-client" --server "$kept_server" "$@"; }
    for _ in $(seq 1 300); do kept_client runs >/dev/null 2>&1 && break; sleep 0.2; done
    echo
    echo "== what a GPU answers: the main job as it ran on an H200 ($(cat "$kept/README.md" | sed -n 's/^Measured: //p')),"
    echo "   kept in examples/h200-main-job/ as data and rendered now by this build"
    for preset in ladder-a ladder-b; do
      id=$(kept_client runs --tag "$preset" --limit 1 --format csv | awk -F, 'NR == 2 { print $1 }')
      [[ -n $id ]] && answer "$preset" "$id" kept_client
    done
  else
    echo "== stored runs"
    client runs --limit 5
  fi
fi
