#!/usr/bin/env bash
# The main job on already built binaries (also used from a relocatable bundle on a GPU node):
#   scripts/demo.sh BIN_DIR [SHAPE]
set -euo pipefail
bin=${1:?usage: demo.sh BIN_DIR [SHAPE]}
shape=${2:-4096x4096x4096}
port=${ABLATION_PORT:-50051}
db=${ABLATION_DB:-ablationd-results.db}
log=${ABLATION_LOG:-ablationd.log}
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
if client device --format json | grep -q '"available": *true'; then
  echo "== measuring abl_L0_R1_bl0_s1_sw1 and cublas_bf16 at $shape (bf16, L2 cold)"
  client run --variant L0_R1_s1 --variant cublas_bf16 --shape "$shape" --tag main-job
else
  echo "== no GPU here: the daemon serves queries but refuses runs, as it should"
  client run --variant L0_R1_s1 --shape "$shape" || true
  echo "== variants (first 10 of $(client variants --format csv | tail -n +2 | wc -l))"
  client variants | sed -n '1,11p'  # sed reads it all: no SIGPIPE under pipefail
fi
echo "== stored runs"
client runs --limit 5
echo "== the latest stored run, read back from the database"
client show latest || echo "(no run stored yet)"
