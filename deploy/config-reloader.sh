#!/bin/sh
# The configuration reloader of ablationd on Kubernetes, a sidecar of the DaemonSet
# (deploy/k8s/base/daemonset.yaml): it watches the files the ConfigMap and the tokens Secret
# mount and, when their content changes, sends the daemon SIGHUP, which reads its configuration
# and token file again without stopping runs (deploy/README.md: what a reload applies, and what
# it names as needing a restart). So a configuration edit reloads instead of rolling the pods,
# whose end would cancel their runs.
#
#   ablationd-config-reloader [--interval SECONDS] CONFIG_FILE [OTHER_FILE...]
#
# The daemon told is the process named ablationd whose command line names CONFIG_FILE (its
# --config): the pod's containers share one PID namespace (shareProcessNamespace), and the
# daemon runs as the same user, so no capability is needed to signal it. The kubelet swaps a
# mounted ConfigMap's files at once (its ..data link), so a file is never seen half written; the
# whole content is compared, not a time stamp. A daemon that is not there (restarting) is told
# at the next look. SIGTERM ends the reloader at once.
set -u

interval=10
if [ "${1:-}" = --interval ]; then
  interval=${2:?--interval needs SECONDS}
  shift 2
fi
config=${1:?usage: ablationd-config-reloader [--interval SECONDS] CONFIG_FILE [OTHER_FILE...]}

log() { printf 'config-reloader: %s\n' "$*"; }

# The content of every watched file, as one checksum (a missing file counts as empty).
digest() {
  for file in "$@"; do
    cat "$file" 2>/dev/null || :
    printf '\n--\n'
  done | cksum
}

# The pid of the ablationd started with --config "$config", or nothing.
daemon_pid() {
  for dir in /proc/[0-9]*; do
    [ "$(cat "$dir/comm" 2>/dev/null)" = ablationd ] || continue
    if tr '\0' '\n' <"$dir/cmdline" 2>/dev/null | grep -qxF -- "$config"; then
      echo "${dir#/proc/}"
      return 0
    fi
  done
  return 1
}

trap 'exit 0' TERM INT
last=$(digest "$@")
log "watching $* every ${interval} s"
while :; do
  # In the background, so that SIGTERM is taken at once rather than after the sleep.
  sleep "$interval" &
  wait $!
  now=$(digest "$@")
  [ "$now" = "$last" ] && continue
  if pid=$(daemon_pid); then
    if kill -HUP "$pid"; then
      log "changed: SIGHUP sent to ablationd (pid $pid), which reloads its configuration"
      last=$now
    fi
  else
    log "changed, but no ablationd started with --config $config runs here now; next look"
  fi
done
