# Sourced by the GPU session scripts (gpu-session.sh, regime-session.sh): the environment of a
# bundle on a GPU node and the helpers every phase uses. The sourcing script sets `bundle` (the
# bundle's folder), `out` (where logs and databases go) and `port` (the daemon's loopback port)
# first.
# shellcheck shell=bash
: "${bundle:?set bundle before sourcing}" "${out:?set out}" "${port:?set port}"
mkdir -p "$out"
export ABLATION_TEST_BIN_DIR=$bundle/bin
export PATH=$PATH:/usr/local/cuda/bin
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
log=$out/session.log
say() { echo "== $*" | tee -a "$log"; }
start=$(date +%s)
elapsed() { echo $(($(date +%s) - start))s; }

# starts PHASE USUAL_SECONDS DEADLINE: says the phase begins, or that it is skipped (false) because
# its usual length would end it after the deadline (seconds since the session's start).
starts() {
  local now=$(($(date +%s) - start))
  if ((now + $2 > $3)); then
    say "SKIPPED $1: ${now}s gone, usually $2s, deadline $3s"
    return 1
  fi
  say "phase $1 ($(elapsed))"
}

daemon=""
start_daemon() {  # start_daemon DB; CONFIG=FILE gives the daemon a configuration (--config)
  "$bundle/bin/ablationd" --listen "127.0.0.1:$port" --db "$1" ${CONFIG:+--config "$CONFIG"} \
    >>"$out/ablationd.log" 2>&1 &
  daemon=$!
  for _ in $(seq 1 300); do c device >/dev/null 2>&1 && return 0; sleep 0.2; done
  say "the daemon did not answer"
  return 1
}
stop_daemon() { [[ -n $daemon ]] && kill -TERM "$daemon" && wait "$daemon"; daemon=""; }
c() { "$bundle/bin/ablation-client" --server "127.0.0.1:$port" "$@"; }
latest() { c runs --limit 1 --format csv | tail -n +2 | cut -d, -f1; }

# checkpoint_database DB: its write-ahead log written into it, so that the file alone is whole.
checkpoint_database() {
  python3 -c 'import sqlite3, sys
sqlite3.connect(sys.argv[1]).execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()' "$1"
}

# compress_databases: every OUT/*.db (its daemon ended: the phased scripts call it after each
# phase) checkpointed and compressed to NAME.db.xz
# (xz -9 through Python's lzma, which every node with python3 has), the database removed.
compress_databases() {
  local db
  for db in "$out"/*.db; do
    [[ -f $db ]] || continue
    checkpoint_database "$db" && python3 -c 'import lzma, shutil, sys
with open(sys.argv[1], "rb") as i, lzma.open(sys.argv[1] + ".xz", "wb", preset=9) as o:
    shutil.copyfileobj(i, o)' "$db" && rm -f "$db" "$db-wal" "$db-shm"
  done
}
