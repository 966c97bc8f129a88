#!/usr/bin/env bash
# Prints again, from the databases kept in evidence/, the figures that notes/gpu-runs.md and the
# README quote, so that anyone can recompute them with this build and no GPU.
#
#   scripts/evidence.sh BIN_DIR [EVIDENCE_FOLDER...]     (default: every folder of evidence/)
#
# Each evidence folder holds its databases (DATABASE.db.xz, xz-compressed, or a path to one kept
# elsewhere in the repository) and a COMMANDS file, one line per figure or table:
#
#   DATABASE: CLIENT ARGUMENTS [=> TEXT THE OUTPUT MUST HOLD]
#
# ("#" starts a comment). For each database named, a copy (decompressed) is served read-only by a
# daemon of this build on a free loopback port; each line's `ablation-client ARGUMENTS` is run
# against it and its output printed under the line. A line whose output lacks its expected text,
# or whose command fails, is reported and makes the exit status 1.
set -uo pipefail
bin=$(cd "${1:?usage: evidence.sh BIN_DIR [EVIDENCE_FOLDER...]}" && pwd)
shift
root=$(cd "$(dirname "$0")/.." && pwd)
folders=("$@")
[[ ${#folders[@]} -gt 0 ]] || folders=("$root"/evidence/*/)
work=$(mktemp -d)
daemons=()
# shellcheck disable=SC2317  # called by the trap
cleanup() {
  local d
  for d in "${daemons[@]}"; do kill -TERM "$d" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
status=0
declare -A server  # database path -> HOST:PORT
declare -A outputs codes  # "database|arguments" -> the command's output and exit status

serve() {  # serve DATABASE_PATH: a daemon on a decompressed copy; sets server[$1]
  local db=$1 n=${#daemons[@]} copy
  copy=$work/$n.db
  if [[ $db == *.xz ]]; then xz -dc "$db" >"$copy" || return 1; else cp "$db" "$copy" || return 1; fi
  "$bin/ablationd" --listen 127.0.0.1:0 --port-file "$work/$n.port" --db "$copy" \
    --metrics-listen '' >"$work/$n.log" 2>&1 &
  daemons+=($!)
  for _ in $(seq 1 300); do [[ -s $work/$n.port ]] && break; sleep 0.1; done
  [[ -s $work/$n.port ]] || { echo "evidence: no daemon for $db: $(tail -3 "$work/$n.log")"; return 1; }
  server[$db]=127.0.0.1:$(cat "$work/$n.port")
}

for folder in "${folders[@]}"; do
  folder=${folder%/}
  [[ -f $folder/COMMANDS ]] || { echo "evidence: $folder has no COMMANDS"; status=1; continue; }
  echo "#### ${folder#"$root"/}"
  while IFS= read -r line || [[ -n $line ]]; do
    line=${line%%#*}
    [[ -z ${line// /} ]] && continue
    db=$folder/${line%%:*}
    rest=${line#*:}
    args=${rest%%=>*}
    expect=""
    [[ $rest == *"=>"* ]] && expect=${rest#*=> }
    [[ -n ${server[$db]:-} ]] || serve "$db" || { status=1; continue; }
    echo "## ${line%%:*}: ablation-client$args"
    key="$db|$args"
    if [[ -n ${outputs[$key]+x} ]]; then
      # The same command on the same database (several figures of one report): printed once,
      # each line checked against it (a report of a long sustained run takes most of a minute).
      out=${outputs[$key]}
      rc=${codes[$key]}
      echo "(the output above, of the same command)"
    else
      # shellcheck disable=SC2086  # the arguments are the line's words
      out=$("$bin/ablation-client" --server "${server[$db]}" --width 0 $args 2>&1)
      rc=$?
      outputs[$key]=$out
      codes[$key]=$rc
      echo "$out"
    fi
    if [[ $rc -ne 0 ]]; then
      echo "evidence: FAILED (exit $rc): $line"
      status=1
    elif [[ -n $expect ]] && [[ $out != *"$expect"* ]]; then
      echo "evidence: FAILED (no '$expect' in the output): $line"
      status=1
    fi
  done <"$folder/COMMANDS"
done
exit $status
