#!/usr/bin/env bash
# The neighbour-independent figures on a GPU node (solo spans, energy per operation, both cuBLAS
# baselines), in phases that each leave a results database in OUT, over a bundle made by
# deploy/make-bundle.sh (with worker_gpu_tests and sm90_gpu_tests as extra binaries for the check
# phase). Observe mode only: nothing here asks for
# a clock lock, and nothing changes GPU settings.
#   scripts/neighbours-session.sh BUNDLE OUT PHASE...
# Phases (R: the run's number, a separate daemon run each; every run sustained unless it says):
#   check     the GPU tests of the two cuBLAS baselines and of the build a problem runs
#   alone     cuBLAS bf16 alone: cublas_bf16 and cublas_bf16_best at 4096^3 and 8192^3, 3 rounds
#   loop      an independent back-to-back loop of the same call (torch.mm, 20 s, events, NVML's
#             clock), 4096^3 and 8192^3, through torch's cuBLAS and its cuBLASLt entry
#             (scripts/independent-cublas.py --sustained-only --blas ...)
#   nosolo    the main job's sweeps (ladder-a, ladder-b at 4096^3, 3 rounds) with --no-solo: its
#             GPU work as it was before solo spans
#   ab-R      the main job's sweeps as they are now (solo spans): ladder-a and ladder-b at 4096^3
#   h-R       ladder-h (4096^3 and 8192^3, 3 rounds)
#   last-R    the last rungs against both baselines: H12 with cublas_bf16 and cublas_bf16_best, F8
#             with cublas_fp8 and cublas_fp8_best, at 4096^3 and 8192^3, 3 rounds, sustained and
#             burst
# DEADLINE=S (seconds since the start) skips a phase whose usual length would end after it, so
# that a device call returns what it finished. Every database ends compressed as OUT/NAME.db.xz;
# OUT/walls.tsv has each run's wall time as this script saw it.
set -uo pipefail
port=50054
# shellcheck source=scripts/phased-session.sh
. "$(dirname "$0")/phased-session.sh"

# The usual length of a phase in seconds on an H200 (an estimate, for DEADLINE only).
usual() {
  case $1 in
    check) echo 60 ;; alone) echo 110 ;; loop) echo 150 ;; nosolo) echo 60 ;;
    ab-*) echo 230 ;; h-*) echo 420 ;; last-*) echo 260 ;; *) echo 60 ;;
  esac
}

# timed NAME ARGS...: `ablation-client -q ARGS...` with its wall time in OUT/walls.tsv.
timed() {
  local name=$1 t0 rc
  shift
  t0=$(date +%s.%N)
  c -q "$@" >>"$log" 2>&1
  rc=$?
  printf '%s\t%s\t%s\t%s\n' "$name" "$(latest)" \
    "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" "$rc" >>"$out/walls.tsv"
  say "$name exit $rc ($(elapsed))"
}

shapes=(--shape 4096 --shape 8192)
say "GPU $(nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv,noheader)"
for phase in "$@"; do
  starts "$phase" "$(usual "$phase")" "$deadline" || continue
  case $phase in
    check)
      timeout 150 "$bundle/bin/worker_gpu_tests" --gtest_brief=1 \
        --gtest_filter='*TheBestCublas*:*HelloDescribes*' >"$out/check-worker.log" 2>&1
      say "worker_gpu_tests exit $?: $(grep -E '^\[  (PASSED|FAILED) ' "$out/check-worker.log" | tr '\n' ' ')"
      timeout 150 "$bundle/bin/sm90_gpu_tests" --gtest_brief=1 \
        --gtest_filter='*TheRegistryNamesTheBuild*' >"$out/check-sm90.log" 2>&1
      say "sm90_gpu_tests exit $?: $(grep -E '^\[  (PASSED|FAILED) ' "$out/check-sm90.log" | tr '\n' ' ')"
      ;;
    alone)
      start_daemon "$out/alone.db" || continue
      timed alone run --variant cublas_bf16 --variant cublas_bf16_best "${shapes[@]}" --rounds 3 \
        --tag alone
      stop_daemon
      ;;
    loop)
      for s in 4096 8192; do
        for blas in cublas cublaslt; do
          timeout 120 python3 "$here/independent-cublas.py" "$s" --sustained-only --blas "$blas" \
            --json "$out/loop-$s-$blas.json" >>"$out/loop.txt" 2>&1
          say "independent loop $s $blas exit $?: $(tail -2 "$out/loop.txt" | tr -s ' ' | tr '\n' ' ')"
        done
      done
      ;;
    nosolo)
      start_daemon "$out/nosolo.db" || continue
      for p in ladder-a ladder-b; do
        timed "nosolo-$p" sweep --preset "$p" --shape 4096 --no-solo --tag main-job --tag no-solo
      done
      stop_daemon
      ;;
    ab-*)
      r=${phase#ab-}
      start_daemon "$out/ab-$r.db" || continue
      for p in ladder-a ladder-b; do
        timed "$p-$r" sweep --preset "$p" --shape 4096 --tag main-job --tag "run-$r"
      done
      stop_daemon
      ;;
    h-*)
      r=${phase#h-}
      start_daemon "$out/h-$r.db" || continue
      timed "ladder-h-$r" sweep --preset ladder-h --tag "run-$r"
      stop_daemon
      ;;
    last-*)
      r=${phase#last-}
      start_daemon "$out/last-$r.db" || continue
      for regime in sustained burst; do
        timed "last-bf16-$regime-$r" run --variant sm90_h12_fitted_unclustered \
          --variant cublas_bf16 --variant cublas_bf16_best "${shapes[@]}" --rounds 3 \
          --regime "$regime" --tag "last-$r"
        timed "last-fp8-$regime-$r" run --variant sm90_fp8_f8_fit_grid --variant cublas_fp8 \
          --variant cublas_fp8_best --dtype fp8 "${shapes[@]}" --rounds 3 --regime "$regime" \
          --tag "last-$r"
      done
      stop_daemon
      ;;
    *) say "unknown phase $phase" ;;
  esac
  compress_databases  # after each phase: a call cut short keeps what ended compressed
done
say "done ($(elapsed))"
