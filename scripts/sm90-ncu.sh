#!/usr/bin/env bash
# Nsight Compute (observe mode, --clock-control none) on cuBLAS and the sm90_tune entries whose
# name contains FILTER: time, SM clock, tensor-pipe activity, DRAM and L2 bytes per launch.
#   scripts/sm90-ncu.sh BUNDLE OUT M N K FILTER
set -uo pipefail
bundle=$1 out=$2 m=$3 n=$4 k=$5 filter=$6
mkdir -p "$out"
export PATH=$PATH:/usr/local/cuda/bin
tag=$(echo "$filter" | tr -c 'A-Za-z0-9\n' '_')
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum
timeout 200 ncu --clock-control none -c 12 --metrics "$metrics" "$bundle/bin/sm90_tune" "$m" "$n" "$k" 1 "$filter" >"$out/ncu-$m-$tag.txt" 2>&1
awk '/^  [a-zA-Z_].*\(/{name=substr($0,3,60)} /gpu__time|per_second|hmma|dram__|lts__/{printf "%s | %s %s %s\n", name, $1, $2, $3}' "$out/ncu-$m-$tag.txt" | grep -v FillKernel | sort | uniq | awk -F'|' '{print}' 
