#!/usr/bin/env bash
# One build-free check cycle on a GPU node, over a relocatable bundle made here by
#   deploy/make-bundle.sh build/default bundle build/default/bin/<test binaries>...
# Runs the GPU tests, then the README's main job at 4096^3, then any extra sweep given as
# arguments to ablation-client run. Never changes the GPU's clocks or settings (observe only).
#   scripts/gpu-check.sh BUNDLE OUT_DIR [run arguments for an extra sweep...]
set -uo pipefail
bundle=$(cd "${1:?usage: gpu-check.sh BUNDLE OUT_DIR [sweep args]}" && pwd)
out=${2:?usage: gpu-check.sh BUNDLE OUT_DIR [sweep args]}
shift 2
mkdir -p "$out"
export ABLATION_TEST_BIN_DIR=$bundle/bin
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done

echo "== GPU"
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv

status=0
for t in kernels_gpu_tests worker_gpu_tests gpu_e2e_tests; do
  [[ -x $bundle/bin/$t ]] || continue
  echo "== $t"
  "$bundle/bin/$t" --gtest_brief=1 >"$out/$t.log" 2>&1
  rc=$?
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? ran|FAILED TEST' "$out/$t.log" | tail -12
  ((rc)) && status=1
done

echo "== main job (scripts/demo.sh)"
ABLATION_DB=$out/results.db ABLATION_LOG=$out/ablationd.log scripts/demo.sh "$bundle/bin" 4096x4096x4096 \
  > "$out/main-job.txt" 2>&1 || status=1
cat "$out/main-job.txt" | tail -25

if (($#)); then
  echo "== sweep: $*"
  port=50052
  "$bundle/bin/ablationd" --listen 127.0.0.1:$port --db "$out/results.db" >"$out/sweep-daemon.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do "$bundle/bin/ablation-client" --server 127.0.0.1:$port device >/dev/null 2>&1 && break; sleep 0.2; done
  "$bundle/bin/ablation-client" --server 127.0.0.1:$port -q run "$@" > "$out/sweep.txt" 2>&1 || status=1
  "$bundle/bin/ablation-client" --server 127.0.0.1:$port results latest --limit 1000 --format csv > "$out/sweep.csv" 2>&1
  kill -TERM $pid; wait $pid
  sort -t, -k1,1 "$out/sweep.txt" | head -5 >/dev/null
  tail -n +1 "$out/sweep.txt" | head -200
fi
exit $status
