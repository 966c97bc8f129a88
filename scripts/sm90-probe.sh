#!/usr/bin/env bash
# Where the sm90 rungs lose against cuBLAS: the tuning tool's timings, then Nsight Compute (observe
# mode, --clock-control none) on one launch of each configuration and of cuBLAS, with its name,
# grid, cluster, clock, tensor-pipe and memory figures. Never changes the GPU's clocks or settings.
#   scripts/sm90-probe.sh BUNDLE OUT [M N K]
set -uo pipefail
bundle=$(cd "${1:?usage: sm90-probe.sh BUNDLE OUT [M N K]}" && pwd)
out=${2:?usage}
mkdir -p "$out"
shape=("${3:-4096}" "${4:-4096}" "${5:-4096}")
export PATH=$PATH:/usr/local/cuda/bin
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
tag=${shape[0]}x${shape[1]}x${shape[2]}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv >"$out/gpu-$tag.txt"
"$bundle/bin/sm90_tune" "${shape[@]}" "${PROBE_SAMPLES:-20}" >"$out/tune-$tag.txt" 2>&1
echo "tune exit $?"; cat "$out/tune-$tag.txt"
if [[ ${PROBE_NCU:-1} == 1 ]] && command -v ncu >/dev/null; then
  ncu --query-metrics >"$out/ncu-metrics.txt" 2>&1
  want=""
  for m in sm__pipe_tensor_op_gmma_cycles_active sm__pipe_tensor_op_hmma_cycles_active \
           sm__inst_executed_pipe_tensor_op_gmma sm__inst_executed_pipe_tensor_op_hmma \
           dram__bytes_read lts__t_bytes sm__cycles_elapsed gpc__cycles_elapsed \
           smsp__warp_issue_stalled_long_scoreboard_per_warp_active l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st; do
    grep -q "^$m " "$out/ncu-metrics.txt" && want+="$m.sum,$m.avg.pct_of_peak_sustained_active,"
  done
  want+="sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum"
  # PROBE_NCU_KERNELS: a regex of kernel names (default: every kernel, the first 48 launches)
  filter=()
  [[ -n ${PROBE_NCU_KERNELS:-} ]] && filter=(-k "regex:$PROBE_NCU_KERNELS")
  timeout 400 ncu --clock-control none "${filter[@]}" -c 48 \
    --section LaunchStats --section SpeedOfLight --section Occupancy --metrics "$want" \
    "$bundle/bin/sm90_tune" "${shape[@]}" 1 >"$out/ncu-$tag.txt" 2>&1
  echo "ncu exit $?"
  grep -E '^  [A-Za-z_].*\(|Duration|gmma|hmma|SM Frequency|Grid Size|Cluster Size|Registers Per|Block Size|Dynamic Shared|lts__t_bytes.sum |dram__bytes_read.sum ' "$out/ncu-$tag.txt" | head -400
fi
