#!/usr/bin/env bash
# One device call for the Hopper ladder's figures: the sm90 GPU tests, three separate daemon runs
# of ladder-h (3 rounds each) with their reports and SASS checks, the tuning tool at 4096^3 and
# 8192^3, and compute-sanitizer (memcheck, racecheck) over the small-shape tests. Observe mode.
#   scripts/sm90-session.sh BUNDLE OUT   (HOPPER_RUNS=N daemon runs, 3 by default;
#   RUNS_ONLY=1 stops after them)
set -uo pipefail
bundle=$(cd "$1" && pwd) out=$2
mkdir -p "$out"
export PATH=$PATH:/usr/local/cuda/bin
here=$(cd "$(dirname "$0")" && pwd)
timeout 200 "$bundle/bin/sm90_gpu_tests" --gtest_brief=1 >"$out/sm90_gpu_tests.log" 2>&1
echo "sm90_gpu_tests exit $?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/sm90_gpu_tests.log" | tr '\n' ' ')"
for i in $(seq 1 "${HOPPER_RUNS:-3}"); do
  "$here/gpu-session.sh" "$bundle" "$out/hopper$i" hopper >/dev/null 2>&1
  echo "hopper run $i: $(grep -c 'exit 0' "$out/hopper$i/session.log") phases exit 0"
  rm -f "$out/hopper$i"/*.db*
done
# The device tool brings back a limited number of files: one archive of the daemon runs.
(cd "$out" && tar -czf hopper-runs.tgz hopper[0-9]* && rm -rf hopper[0-9]*)
[[ ${RUNS_ONLY:-0} == 1 ]] && exit 0
"$bundle/bin/sm90_tune" 4096 4096 4096 20 >"$out/tune-4096.txt" 2>&1
"$bundle/bin/sm90_tune" 8192 8192 8192 10 >"$out/tune-8192.txt" 2>&1
cat "$out/tune-4096.txt" "$out/tune-8192.txt"
timeout 150 compute-sanitizer --tool memcheck "$bundle/bin/sm90_gpu_tests" \
  --gtest_filter='*Fp64*:*StreamKShares*' >"$out/memcheck.log" 2>&1
echo "memcheck exit $?: $(grep 'ERROR SUMMARY' "$out/memcheck.log")"
# Where the L2 traffic of the last rung goes, against cuBLAS's (one launch each after warm-up).
m=lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_sectors_srcnode_gpc.sum,dram__bytes_read.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second
timeout 120 ncu --clock-control none -c 12 --metrics "$m" "$bundle/bin/sm90_tune" 4096 4096 4096 1 "H10 " \
  >"$out/ncu-l2-4096.txt" 2>&1
echo "ncu exit $?"
timeout 150 compute-sanitizer --tool racecheck "$bundle/bin/sm90_gpu_tests" \
  --gtest_filter='*Fp64*' >"$out/racecheck.log" 2>&1
echo "racecheck exit $?: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$out/racecheck.log" | tr '\n' ' ')"
