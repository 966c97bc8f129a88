#!/usr/bin/env bash
# Build-free fault checks on a GPU node, over a relocatable bundle made here by
#   deploy/make-bundle.sh build/default bundle
# (a) A hung kernel: the real worker's test fault (ABLATION_WORKER_TEST_FAULT=hang-on-variant,
#     server/worker/fault_injection.h) hangs one measurement; reports the seconds until the daemon
#     declared it hung against the bound 2 x budget + hang_margin_seconds, where budget =
#     int(3 x max_seconds + warmup_seconds) + 1 (server/core/runs/measurement_step.cc).
# (b) The daemon SIGKILLed mid-measurement: no ablation-worker may survive it (pgrep) within a
#     few seconds (PR_SET_PDEATHSIG in server/core/workers/worker_process.cc).
# Observe mode only: nothing here locks clocks or changes GPU settings.
#   scripts/gpu-faults.sh BUNDLE OUT_DIR
set -uo pipefail
bundle=$(cd "${1:?usage: gpu-faults.sh BUNDLE OUT_DIR}" && pwd)
out=${2:?usage: gpu-faults.sh BUNDLE OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
bin=$bundle/bin
client() { "$bin/ablation-client" --server "127.0.0.1:$port" "$@"; }
# A process that still runs: a zombie waiting for init to reap it holds no GPU and counts as gone.
alive() {
  local state
  state=$(ps -o stat= -p "$1" 2>/dev/null)
  [[ -n $state && $state != Z* ]]
}
status=0

# start_daemon NAME [ENV=VALUE...]: a daemon on a free port with its own database and log.
start_daemon() {
  local name=$1
  shift
  rm -f "$out/$name.port"
  env "$@" "$bin/ablationd" --listen 127.0.0.1:0 --db "$out/$name.db" \
    --port-file "$out/$name.port" --config "$out/faults.toml" >"$out/$name.log" 2>&1 &
  daemon=$!
  for _ in $(seq 1 600); do [[ -s $out/$name.port ]] && break; sleep 0.2; done
  port=$(cat "$out/$name.port" 2>/dev/null)
  if [[ -z $port ]]; then
    echo "FAIL: $name: the daemon did not listen; log:"
    tail -20 "$out/$name.log"
    return 1
  fi
}

margin=5
printf 'hang_margin_seconds = %d\n' "$margin" >"$out/faults.toml"

echo "== GPU"
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader

echo "== (a) hang: declared within 2 x budget + margin"
hung=abl_L1_R1_bl0_s3_sw1
max_seconds=1
warmup_seconds=0.1
budget=$(awk -v m=$max_seconds -v w=$warmup_seconds 'BEGIN { printf "%d", int(3 * m + w) + 1 }')
bound=$((2 * budget + margin))
if start_daemon hang ABLATION_WORKER_TEST_FAULT="hang-on-variant:$hung"; then
  client -q --format json run --variant "$hung" --variant cublas_bf16 --shape 4096 \
    --max-seconds "$max_seconds" >"$out/hang.json" 2>"$out/hang.err"
  # The failed measurement's wall_seconds: how long it held the GPU until it was declared hung.
  read -r wall error < <(python3 - "$out/hang.json" "$hung" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))["items"]  # the client's envelope of kind "measurements"
row = next((r for r in rows if r.get("variant") == sys.argv[2]), {})
print(row.get("wall_seconds", row.get("wallSeconds", -1)), repr(row.get("error", "")))
EOF
)
  other=$(grep -c '"cublas_bf16"' "$out/hang.json")
  echo "hang declared after ${wall} s; bound ${bound} s (budget ${budget} s, margin ${margin} s); error: $error"
  if ! awk -v w="$wall" -v b="$bound" 'BEGIN { exit !(w > 0 && w <= b + 1) }'; then
    echo "FAIL: the hang took longer than the bound (or was not seen)"
    status=1
  fi
  ((other >= 1)) || { echo "FAIL: the next measurement did not run on a fresh worker"; status=1; }
  kill -TERM "$daemon"
  wait "$daemon"
else
  status=1
fi

echo "== (b) SIGKILL of the daemon mid-measurement: no worker survives"
if start_daemon kill; then
  client -q run --detach --variant cublas_bf16 --shape 8192 --max-seconds 30 \
    --target-noise 0.000001 >"$out/kill.run" 2>&1
  sleep 8  # the measurement is sampling now (30 s cap)
  workers=$(pgrep -P "$daemon" -x ablation-worker | tr '\n' ' ')
  echo "daemon $daemon, workers: ${workers:-none}"
  [[ -n $workers ]] || { echo "FAIL: no worker to watch"; status=1; }
  kill -KILL "$daemon"
  wait "$daemon" 2>/dev/null
  left=""
  for i in $(seq 1 50); do
    left=""
    for w in $workers; do alive "$w" && left+="$w "; done
    [[ -z $left ]] && break
    sleep 0.1
  done
  if [[ -n $left ]]; then
    echo "FAIL: worker(s) $left outlived the daemon by 5 s"
    pgrep -a ablation-worker
    # shellcheck disable=SC2086 # a list of pids
    kill -KILL $left
    status=1
  else
    echo "no ablation-worker left $((i * 100)) ms after the SIGKILL (checked every 100 ms)"
  fi
  others=""
  for w in $(pgrep -x ablation-worker); do alive "$w" && others+="$w "; done
  [[ -z $others ]] || echo "note: other ablation-worker processes run on this node: $others"
else
  status=1
fi
exit $status
