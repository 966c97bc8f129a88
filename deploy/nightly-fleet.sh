#!/usr/bin/env bash
# The nightly regression check on every daemon of a fleet (Kubernetes: every selected GPU node):
# the daemons' addresses come from ABLATION_SERVERS (space-separated HOST:PORT) or, where that is
# unset, from the DNS name ABLATION_PODS (a headless Service, which resolves to every daemon pod)
# on ABLATION_PORT (default 50051). deploy/nightly.sh runs once per daemon, at the same time,
# each with its own REPORT_DIR/<address>/ and its own log; each daemon compares with its own
# previous night (each node keeps its own results). TLS: ABLATION_TLS=1, ABLATION_CA and
# ABLATION_TLS_SERVER_NAME (the name in the daemons' certificate, since pods are reached by IP);
# ABLATION_TOKEN_FILE: the token. The other settings are nightly.sh's.
#
# Exit status: the worst of the daemons' (nightly.sh: 0 fine, 1 regression, 2 not done, 3 failed
# measurements), 2 where no daemon was found.
set -uo pipefail

log() { printf 'nightly-fleet: %s\n' "$*"; }
[[ -n ${REPORT_DIR:-} ]] || { log "error: REPORT_DIR is not set" >&2; exit 2; }
nightly=${NIGHTLY:-$(dirname "$0")/ablationd-nightly}
[[ -x $nightly ]] || nightly=$(dirname "$0")/nightly.sh

servers=${ABLATION_SERVERS:-}
if [[ -z $servers && -n ${ABLATION_PODS:-} ]]; then
  # Every address the headless Service has: one per ready daemon pod.
  servers=$(getent ahostsv4 "$ABLATION_PODS" | awk -v port="${ABLATION_PORT:-50051}" \
    '{ print $1 ":" port }' | sort -u | tr '\n' ' ')
fi
read -r -a list <<<"$servers"
if ((${#list[@]} == 0)); then
  log "error: no daemon to check (ABLATION_SERVERS and ABLATION_PODS resolve to nothing)" >&2
  exit 2
fi
log "${#list[@]} daemon(s): ${list[*]}"

pids=() logs=()
for server in "${list[@]}"; do
  dir=$REPORT_DIR/${server//:/_}
  mkdir -p "$dir"
  logs+=("$dir/nightly.log")
  ABLATION_SERVER=$server REPORT_DIR=$dir "$nightly" >"$dir/nightly.log" 2>&1 &
  pids+=($!)
done
worst=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"
  status=$?
  log "${list[$i]}: exit $status ($(tail -n 1 "${logs[$i]}"))"
  # 2 (not done) outranks 1 (regression) outranks 3 (failed measurements) outranks 0.
  rank() { case $1 in 0) echo 0 ;; 3) echo 1 ;; 1) echo 2 ;; *) echo 3 ;; esac; }
  (($(rank "$status") > $(rank "$worst"))) && worst=$status
done
exit "$worst"
