#!/usr/bin/env bash
# Nsight Compute (observe mode, --clock-control none) on one launch of the sm90_tune entries whose
# name contains FILTER and of the kernel matching KERNEL (a regex): warp states, scheduler and
# pipe use, and per-SASS-instruction stall samples, to see where a rung loses its cycles.
#   scripts/sm90-ncu-stalls.sh BUNDLE OUT M N K FILTER KERNEL TAG
set -uo pipefail
bundle=$1 out=$2 m=$3 n=$4 k=$5 filter=$6 kernel=$7 tag=$8
mkdir -p "$out"
export PATH=$PATH:/usr/local/cuda/bin
metrics=sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.sum,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
timeout 240 ncu --clock-control none -k "regex:$kernel" -s 2 -c 1 \
  --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
  --section SourceCounters --metrics "$metrics" -o "$out/$tag" \
  "$bundle/bin/sm90_tune" "$m" "$n" "$k" 1 "$filter" >"$out/$tag-run.txt" 2>&1
echo "ncu $tag exit $?"
ncu -i "$out/$tag.ncu-rep" --page details >"$out/$tag-details.txt" 2>&1
ncu -i "$out/$tag.ncu-rep" --page source --print-source sass --csv >"$out/$tag-sass.csv" 2>&1
rm -f "$out/$tag.ncu-rep"
python3 "$(dirname "$0")/ncu-stall-summary.py" "$out/$tag-sass.csv" 40 >"$out/$tag-stalls.txt" 2>&1
grep -E "Stall|Issue|Pipe|Warp Cycles|Eligible|Active Warps|hmma|per_second|issue_active|Duration" \
  "$out/$tag-details.txt" | head -40
