#!/usr/bin/env bash
# The main job on already built binaries (also used from a relocatable bundle on a GPU node):
#   scripts/demo.sh BIN_DIR [SHAPE]
# Starts ablationd on loopback with a SQLite file of its own, sweeps the presets ladder-a and
# ladder-b at SHAPE (default 4096^3; 3 rounds each, the presets' default) and ends with the
# answer: each ladder's rungs with their change and 95% interval (`ablation-client report
# --format md` of the two runs), what the figures say (read from the report's CSV: which changes
# are significant, and their sign), and the paths of the HTML reports it wrote. Without a GPU it
# says so, shows the service answering, and does the same for the real H200 run kept in
# examples/h200-main-job/.
# Everything it writes goes under one folder, ABLATION_STATE_DIR (default main-job/, ignored by
# git): the database (and the daemon's clock journal beside it), the log, the HTML reports.
# Environment: ABLATION_PORT (50051), ABLATION_STATE_DIR (main-job), ABLATION_DB
# ($ABLATION_STATE_DIR/results.db), ABLATION_LOG ($ABLATION_STATE_DIR/ablationd.log),
# ABLATION_REPORT_DIR ($ABLATION_STATE_DIR).
set -euo pipefail
bin=${1:?usage: demo.sh BIN_DIR [SHAPE]}
shape=${2:-4096x4096x4096}
port=${ABLATION_PORT:-50051}
state=${ABLATION_STATE_DIR:-main-job}
db=${ABLATION_DB:-$state/results.db}
log=${ABLATION_LOG:-$state/ablationd.log}
report_dir=${ABLATION_REPORT_DIR:-$state}
mkdir -p "$(dirname "$db")" "$(dirname "$log")" "$report_dir"
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

# What the figures say, read from the report's CSV (its table $1's rows, in $2): each change with
# its interval, its sign (positive: faster than the rung it is compared with) and whether it is
# significant (the report's within_noise column: an interval that holds 0, or a change under the
# run's noise floor, is not). A reader of numbers, never text written in advance.
reading() {
  awk -v want="$1" '
    # Splits one RFC 4180 line (no newlines inside fields) into f[1..n]; returns n.
    function split_csv(line, f,    n, i, c, field, quoted) {
      n = 0; field = ""; quoted = 0
      for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (quoted) {
          if (c == "\"" && substr(line, i + 1, 1) == "\"") { field = field c; i++ }
          else if (c == "\"") quoted = 0
          else field = field c
        } else if (c == "\"") quoted = 1
        else if (c == ",") { f[++n] = field; field = "" }
        else field = field c
      }
      f[++n] = field
      return n
    }
    function pct(x) { return sprintf("%+.1f", 100 * x) }
    NR == 1 { n = split_csv($0, head); for (i = 1; i <= n; i++) col[head[i]] = i; next }
    {
      split_csv($0, f)
      if (f[col["table"]] != want || f[col["status"]] != "ok" || f[col["change"]] == "") next
      change = f[col["change"]] + 0
      line = sprintf("%s against %s: %s%% [%s, %s]", f[col["label"]], f[col["vs"]], pct(change),
                     pct(f[col["change_ci_low"]]), pct(f[col["change_ci_high"]]))
      if (f[col["within_noise"]] == "true") { line = line ", within noise"; same++ }
      else if (change > 0) { line = line ", faster (significant)"; faster++ }
      else { line = line ", slower (significant)"; slower++ }
      lines[++count] = line
    }
    END {
      if (count == 0) { print "What the figures say: no rung of this run has a change to read."; exit }
      printf "What the figures say (from the report'"'"'s CSV; significant: the 95%% interval excludes 0\n"
      printf "and the change is above the run'"'"'s noise floor): %d of %d changes faster, %d slower, %d within noise.\n",
             faster, count, slower, same
      for (i = 1; i <= count; i++) print "- " lines[i]
    }' <<<"$2"
}

# Prints the ladder section of run $2's report (preset $1), read through the client function $3,
# then what its figures say. A report without that heading (the preset's title changed): the
# whole report, not nothing.
answer() {
  local preset=$1 id=$2 via=$3 md text title
  case $preset in ladder-a) title="Ladder A" ;; *) title="Ladder B" ;; esac
  md=$("$via" report "$id" --format md)
  echo
  echo "run $id (preset $preset):"
  echo
  text=$(section "$title" "$md")
  if [[ -n $text ]]; then echo "$text"; else echo "$md"; fi
  echo
  reading "$preset" "$("$via" report "$id" --format csv)"
}

# Writes run $2's HTML report (preset $1) through the client function $3 into $report_dir, named
# after $4 and the preset; prints its absolute path.
html_report() {
  local preset=$1 id=$2 via=$3 name=$4 html
  html="$report_dir/$name-$preset-run$id.html"
  "$via" --quiet report "$id" --format html -o "$html"
  realpath "$html"
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

reports=()
if client device --format json | grep -q '"available": *true'; then
  declare -A runs=()
  for preset in ladder-a ladder-b; do
    echo "== sweeping $preset at $shape (bf16, L2 cold, 3 rounds in shuffled orders)"
    runs[$preset]=$(sweep "$preset")
  done
  for preset in ladder-a ladder-b; do
    reports+=("$(html_report "$preset" "${runs[$preset]}" client main-job)")
  done
  echo
  echo "== the answer: ladders A and B at $shape"
  for preset in ladder-a ladder-b; do answer "$preset" "${runs[$preset]}" client; done
else
  echo "== no GPU here: the daemon serves queries but refuses runs, as it should; the ladders A"
  echo "   and B at $shape need a GPU (on a GPU node: scripts/demo.sh on a bundle, deploy/README.md)"
  # A run asked for anyway: the daemon's reason, in a sentence (the client's exit code and gRPC
  # status are for scripts, not for this page).
  if refusal=$(client run --variant L0_R1_s1 --shape "$shape" 2>&1); then
    echo "$refusal"
  else
    reason=$(sed -n '1s/^error: \([A-Z_]*: \)\{0,1\}//p' <<<"$refusal")
    echo "== asked to run L0_R1_s1 anyway, the daemon refused: ${reason:-see $log}"
  fi
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
    "$bin/ablationd" --listen "$kept_server" --db "$copy/results.db" --metrics-listen '' \
      >"$copy/ablationd.log" 2>&1 &
    kept_daemon=$!
    trap 'kill -TERM $daemon $kept_daemon 2>/dev/null; wait $daemon $kept_daemon 2>/dev/null || true; rm -rf "$copy"' EXIT
    kept_client() { "$bin/ablation-client" --server "$kept_server" "$@"; }
    for _ in $(seq 1 300); do kept_client runs >/dev/null 2>&1 && break; sleep 0.2; done
    echo
    echo "== what a GPU answers: the main job as it ran on an H200 ($(sed -n 's/^Measured: //p' "$kept/README.md")),"
    echo "   kept in examples/h200-main-job/ as data and rendered now by this build"
    for preset in ladder-a ladder-b; do
      id=$(kept_client runs --tag "$preset" --limit 1 --format csv | awk -F, 'NR == 2 { print $1 }')
      [[ -n $id ]] || continue
      answer "$preset" "$id" kept_client
      reports+=("$(html_report "$preset" "$id" kept_client h200-main-job)")
    done
  else
    echo "== stored runs"
    client runs --limit 5
  fi
fi
echo
if ((${#reports[@]} > 0)); then
  echo "HTML reports written:"
  printf '  %s\n' "${reports[@]}"
else
  echo "No HTML report written: no run to report on."
fi
