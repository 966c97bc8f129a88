# Sourced by the phased GPU session scripts (neighbours-, own-contract-, small-shapes-session.sh),
# which are called as `SCRIPT BUNDLE OUT PHASE...` and set `port` first: reads the bundle and the
# output folder from the arguments, leaves the phases in "$@" (a sourced file shifts its caller's
# arguments), sets `here` (the scripts' folder) and `deadline` (DEADLINE, seconds since the
# start), and sources session-common.sh.
# shellcheck shell=bash
: "${port:?set port before sourcing}"
bundle=$(cd "${1:?usage: $(basename "$0") BUNDLE OUT PHASE...}" && pwd)
out=${2:?usage: $(basename "$0") BUNDLE OUT PHASE...}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/session-common.sh
. "$here/session-common.sh"
# shellcheck disable=SC2034  # read by the sourcing script
deadline=${DEADLINE:-100000}
# A call's `timeout` signals the whole process group (the client, the daemon, this script): the
# daemon has written every result as it came, so the database is stopped with it, its write-ahead
# log checkpointed into it (fast, unlike compressing) and left whole for the call's archive.
on_signal() {
  trap - TERM INT
  say "stopped by a signal ($(elapsed)): databases checkpointed, left uncompressed"
  stop_daemon 2>/dev/null
  local db
  for db in "$out"/*.db; do
    [[ -f $db ]] && checkpoint_database "$db"
  done
  exit 143
}
trap on_signal TERM INT
