#!/usr/bin/env bash
# The small-shape ladder (notes/small-shape-ladder.md) on a GPU node, in phases that each leave a
# results database in OUT, over a bundle made by deploy/make-bundle.sh with sm90_gpu_tests as an
# extra binary. Observe mode only: nothing here asks for a clock lock or changes GPU settings.
#   scripts/small-shapes-session.sh BUNDLE OUT PHASE...
# Phases (R: the run's number, a separate daemon run each):
#   check     the GPU tests of the few-row paths (against FP64 and cuBLAS at every build of rows),
#             the 64-row and swapped tiles, the per-bucket rung, the builds' registers (no
#             spills, block sizes) and the build each problem runs
#   burst-R   sweep --preset serving --regime burst --verify: every rung and both cuBLAS
#             baselines at the preset's 24 shapes, from a cooled GPU
#   cap-R     sweep --preset serving, sustained (at the cap) with 1 s windows and 1 s solo spans
#             (the serving shapes are short: a second holds thousands of launches); about 60 s a
#             shape, so the 24 take more than one device call: give SHAPES of 9 or fewer
#   solo-R    the cap as cap-R with S12, S11 and both cuBLAS baselines only (about 20 s a shape:
#             182-186 s for 9) at the serving preset's 9 shapes of M <= 128, or SHAPES
#   large-R   H12 beside both cuBLAS baselines at 4096^3, sustained and burst, 3 rounds
#   tiles     the 64-row builds (own, shorter ranges, swapped; 64x64 of 13 stages, own,
#             unclustered and swapped; 64x8, own and swapped) and H12's 128x16 swapped and
#             128x128 tiles (not the 1x2 clusters sharing A, rejected in tiles-8, nor the 192x128
#             swapped tiles, rejected in small-shapes-14: their cells kept there for the table; the
#             GPU test still runs them) beside H12, S9, S11 and cuBLAS at
#             the serving shapes of 16, 128 and 512 rows and columns and at 256 rows (burst,
#             verified): where the small-shape rungs' tile_rows could reach, and the cells the
#             tables of S10 and S12 (tools/sm90_bucket_table.py --table s10, s12) need
#   counters  Nsight Compute counters (run --profile, stored with each row) of S9, S11 and the
#             64x64 build beside both cuBLAS baselines where the ladder is furthest from its
#             targets (128x4096x4096, 16x4096x4096, 16x14336x4096, 1x4096x4096), and of H12
#             beside them at 4096^3
#   gaps      the same counters where S12 is furthest from each shape's better cuBLAS baseline
#             (16x14336x4096, 128x14336x4096, 16x4096x4096): S12, S11, the builds S12 picks or
#             could pick there (64x256 shorter ranges, 64x64 unclustered, 64x8 swapped, 128x16
#             swapped, 128x128; the rejected 192x128 swapped build, for why it lost, and the same
#             tiles in 4x1 clusters sharing B) beside both cuBLAS baselines
#   quads-R   the 192x128 swapped tiles in 4x1 clusters sharing B, data-parallel (T192hQ, cuBLAS's
#             kind of kernel at 128x14336x4096), beside the same tiles with stream-K (T192hS),
#             the 128x128 tiles, S12, S11 (the default of S12's table, so that the run is a
#             source of it: tools/sm90_bucket_table.py) and both cuBLAS baselines at the serving
#             shapes of 128 rows and at 512x14336x4096, 3 rounds, burst, verified: whether sharing
#             B without fix-ups closes S12's gap at 128x14336x4096, a run R
#   n112-R    the 128x112 tiles (T128x112: 128x14336x4096 in 128 tiles, one round on 128 of the
#             132 SMs, where the 128x128 tiles' 112 leave 20 idle), the 128x128 tiles with
#             stream-K on every SM (T128hk: those 112 tiles in 132 ranges of K), the 128x16
#             swapped tiles so (T128sSk: 16x14336x4096's 112 tiles in 132 ranges of K) and the
#             64x64 unclustered tiles so (T64nUk: the 128 tiles of 128x4096xK in 132), the 64x8
#             swapped tiles so (T64eSk: 16x4096x4096's 128 tiles in 132) beside the tiles they
#             change (T128h, T128sS, T64nU, T64eS), S12, S11 (so that the run is a source of
#             S12's table) and both cuBLAS baselines at the serving shapes of 128 rows,
#             16x14336x4096, 16x4096x4096 and 512x14336x4096, 3 rounds, burst, verified: whether
#             filling the SMs closes S12's gaps at 128x14336x4096, 16x14336x4096 and
#             16x4096x4096, a run R
#   pairs-R   the 64x8 tiles in 1x2 clusters sharing A (T64eP, and swapped T64eSP: cuBLAS's kind of
#             kernel at 16x4096x4096) beside the same tiles alone (T64e, T64eS), the 128x16
#             swapped tiles, S12, S11 (so that the run is a source of S12's table) and both cuBLAS
#             baselines at the serving shapes of 16 rows or columns, 4 rounds with --fresh-inputs
#             (each round on inputs of its own: fresh-3 saw the unpaired 64x8 build's level follow
#             the allocation), burst, verified, a run R
#   gemv      the user example gemv_rows beside cuBLAS at the preset's shapes of M <= 16
#   roof      the user example stream_sum (general/: a pure read of bf16 rows, 4 builds: UNROLL 4
#             and 16, each with and without the L2 fetching 256 bytes a miss) at the
#             bytes of the M <= 16 shapes' B: 4096x4096 (33.6 MB), 14336x4096 and 4096x14336
#             (117 MB), burst: the share of the measured bandwidth a kernel that only streams
#             those bytes reaches, timed as every kernel is (target 2's ceiling); roof-R the
#             same, then the serving preset at 1x4096x4096 and 16x4096x4096 in the same database
#             (burst, verified): the ceiling and S12's share beside it, a run R
#   stalls    where H12 and cuBLAS's kernel lose their cycles at 4096^3: Nsight Compute's
#             per-SASS-instruction stall samples of one launch of each through sm90_tune (the
#             bundle must carry it) and scripts/sm90-ncu-stalls.sh; OUT/stalls-*-stalls.txt names
#             the instructions where the warps wait (target 3's barrier stalls)
#   warpstores  H12 with per-warp TMA stores (Knobs::warp_stores: no named barriers in the
#             epilogue) beside H12 and cuBLAS through sm90_tune at 4096^3, three runs of 50
#             samples (L2 flushed, medians; each run checks both against cuBLAS): one build
#             against target 3's barrier stalls (rejected in small-shapes-10: those stalls are
#             wgmma waits)
#   ring-R    S11 (B through a cp.async ring) beside S9 and both cuBLAS baselines at the 7
#             shapes of M or N of 16 or less, burst, verified: a rerun of S11's change
#   procs-R   R daemon processes one after another, each running S12, S11 and cuBLAS's best
#             pick at 16x4096x14336 and 16x14336x4096 in two runs of 2 rounds (burst, verified),
#             all in OUT/procs-R.db: the rounds of a run share its inputs, each run allocates its
#             own (the daemon releases them at a run's end), each process has its own context. A
#             slow mode of one build (S12's 64x8 swapped build at 16x4096x14336 in
#             small-shapes-11's solo-1, 17% for the whole window of that shape) that follows the
#             process slows both runs of it; one that follows the allocation, one run's rounds
#   levels-R  R daemon processes, each three runs of 4 rounds (burst, round 0 verified) at
#             16x4096x14336 of the 64x8 swapped build, the 128x16 swapped build and cuBLAS's best
#             pick, named directly: with the L2 rotation (the default), with a flush before each
#             sample (--flush-l2: every sample synchronised, as sm90_tune's, where the three levels
#             did not show) and with the L2 hot (--hot-l2), all in OUT/levels-R.db (runs 3P-2,
#             3P-1, 3P are process P's): whether the levels need the daemon's back-to-back
#             batches, and whether the 128x16 build (S12's alternative there) has levels of its own
#   fresh-R   R daemon processes, each one run of 8 rounds (burst, round 0 verified) of the same
#             three items at 16x4096x14336 with --fresh-inputs (each round allocates its inputs
#             anew), in OUT/fresh-R.db (run P is process P's): in levels-3 every run held one
#             level through its 4 rounds and changed it between runs; rounds apart here say the
#             allocation draws the level, one level a run says something else does
#   windows   the 64x8 swapped build (S12's at 16x4096x14336) beside cuBLAS through sm90_tune
#             --windows at 16x4096x14336: 60 windows of 50 samples over two input sets, then 60
#             over one (OUT/windows-2.txt, windows-1.txt): whether its three levels of a window
#             (35.1, 40.2, 42.3 TFLOPS in procs-6) follow where the inputs lie or come with the same
#             buffers (the bundle must carry sm90_tune)
# SHAPES="1x4096x4096 ..." replaces the serving preset's shapes in burst-R, cap-R and solo-R.
# DEADLINE=S (seconds since the start) skips a phase whose usual length would end after it, so
# that a device call returns what it finished. Every database ends compressed as OUT/NAME.db.xz.
set -uo pipefail
port=50056
# shellcheck source=scripts/phased-session.sh
. "$(dirname "$0")/phased-session.sh"
shapes=()
for s in ${SHAPES:-}; do shapes+=(--shape "$s"); done
count=$((${#shapes[@]} / 2))
ring_shapes=()  # the serving preset's shapes of M or N of 16 or less, or SHAPES
for s in ${SHAPES:-1x4096x4096 16x4096x4096 16x4096x14336 16x14336x4096 4096x16x4096 \
  4096x16x14336 14336x16x4096}; do ring_shapes+=(--shape "$s"); done
solo_shapes=()  # SHAPES, or the serving preset's 9 shapes of M <= 128
for s in ${SHAPES:-1x4096x4096 1x14336x4096 1x4096x14336 16x4096x4096 16x14336x4096 \
  16x4096x14336 128x4096x4096 128x14336x4096 128x4096x14336}; do solo_shapes+=(--shape "$s"); done
((count > 0)) || count=24
usual() {  # seconds a phase took on an H100 (burst: about 11 s a shape; cap: about 60 s a
  # shape, solo spans included; solo: about 20 s a shape, two words of solo_shapes each)
  case $1 in
    check) echo 15 ;; burst-*) echo $((11 * count + 30)) ;; cap-*) echo $((60 * count + 10)) ;;
    solo-*) echo $((20 * ${#solo_shapes[@]} / 2 + 10)) ;;
    large-*) echo 80 ;;
    tiles) echo 180 ;; counters) echo 50 ;; gaps) echo 80 ;; ring-*) echo 60 ;; quads-*) echo 60 ;;
    n112-*) echo 135 ;;
    pairs-*) echo 120 ;;
    roof) echo 30 ;; roof-*) echo 60 ;; stalls) echo 70 ;; warpstores) echo 45 ;;
    windows) echo 40 ;;
    levels-*) per_process 30 "$1" ;;
    fresh-*) per_process 20 "$1" ;;
    procs-*) per_process 20 "$1" ;;
    *) echo 60 ;;
  esac
}
per_process() {  # per_process SECONDS PHASE-R: SECONDS for each of R daemon processes (1 for an
  # R that is no count: the phase itself says so)
  local n=${2#*-}
  [[ $n =~ ^[1-9][0-9]*$ ]] || n=1
  echo $(($1 * n))
}
# The items the levels and fresh phases run at 16x4096x14336: S12's 64x8 swapped build, the 128x16
# swapped build and cuBLAS's best pick, named directly, burst, round 0 verified.
level_items=(--variant sm90_h12_rows64_n8_swapped --variant sm90_h12_n16_swapped
  --variant cublas_bf16_best --shape 16x4096x14336 --regime burst --verify)
start_user_daemon() {  # start_user_daemon DB: a daemon that takes user kernels from the run role
  printf '[user_kernels]\ncompiler = "%s"\nadd_role = "run"\n' \
    "$bundle/bin/ablation-compile" >"$out/user.toml"
  CONFIG=$out/user.toml start_daemon "$1"
}
has_tune() {  # has_tune PHASE: whether the bundle carries sm90_tune (said when it does not)
  [[ -x $bundle/bin/sm90_tune ]] && return 0
  say "$1: the bundle has no sm90_tune"
  return 1
}
sweep() {  # sweep NAME ARGS...: the serving preset with ARGS, its exit and time said
  local name=$1
  shift
  c -q sweep --preset serving "${shapes[@]}" "$@" >>"$log" 2>&1
  say "$name exit $? ($(elapsed))"
}
burst_run() {  # burst_run NAME RUN-ARGS...: one verified burst run of RUN-ARGS in a daemon of
  # its own on OUT/NAME.db, tagged small-NAME, its exit and time said (the comparison phases)
  local name=$1
  shift
  start_daemon "$out/$name.db" || return 0
  c -q run "$@" --regime burst --verify --tag "small-$name" >>"$log" 2>&1
  say "$name exit $? ($(elapsed))"
  stop_daemon
}

say "GPU $(nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit --format=csv,noheader)"
for phase in "$@"; do
  starts "$phase" "$(usual "$phase")" "$deadline" || continue
  r=${phase#*-}
  case $phase in
    check)
      timeout 120 "$bundle/bin/sm90_gpu_tests" --gtest_brief=1 \
        --gtest_filter='*FewRow*:*SixtyFourRow*:*PerBucket*:*DoesNotSpill*:*TheRegistryNamesTheBuild*:*TheRing*' >"$out/check-sm90.log" 2>&1
      say "sm90_gpu_tests exit $?: $(grep -E '^\[  (PASSED|FAILED) ' "$out/check-sm90.log" | tr '\n' ' ')"
      grep -E 'Failure|Expected|Which is|actual' "$out/check-sm90.log" | head -20 | tee -a "$log"
      if [[ -x $bundle/bin/worker_gpu_tests ]]; then  # when the bundle carries it
        ABLATION_TEST_BIN_DIR=$bundle/bin timeout 120 "$bundle/bin/worker_gpu_tests" --gtest_brief=1 \
          --gtest_filter='*Describe*:*ProfileOnce*:*L2Flush*' >"$out/check-worker.log" 2>&1
        say "worker_gpu_tests exit $?: $(grep -E '^\[  (PASSED|FAILED) ' "$out/check-worker.log" | tr '\n' ' ')"
      fi
      ;;
    burst-*)
      start_daemon "$out/burst-$r.db" || continue
      sweep "burst-$r" --regime burst --verify --rounds 1 --tag "small-burst-$r"
      stop_daemon
      ;;
    cap-*)
      start_daemon "$out/cap-$r.db" || continue
      sweep "cap-$r" --window-seconds 1 --solo-seconds 1 --settle-max-seconds 8 --rounds 1 \
        --tag "small-cap-$r"
      stop_daemon
      ;;
    solo-*)  # the cap as cap-R, with the last rung, the one before it and both cuBLAS
      # baselines only: 4 variants' solo spans a shape rather than the sweep's 15
      start_daemon "$out/solo-$r.db" || continue
      c -q run --variant sm90_s12_buckets --variant sm90_s11_ring --variant cublas_bf16 \
        --variant cublas_bf16_best "${solo_shapes[@]}" --window-seconds 1 --solo-seconds 1 \
        --settle-max-seconds 8 --rounds 1 --tag "small-solo-$r" >>"$log" 2>&1
      say "solo-$r exit $? ($(elapsed))"
      stop_daemon
      ;;
    large-*)
      start_daemon "$out/large-$r.db" || continue
      for regime in sustained burst; do
        c -q run --variant sm90_h12_fitted_unclustered --variant cublas_bf16 \
          --variant cublas_bf16_best --shape 4096 --rounds 3 --regime "$regime" \
          --tag "large-$r" >>"$log" 2>&1
        say "large-$regime-$r exit $? ($(elapsed))"
      done
      stop_daemon
      ;;
    tiles)
      start_daemon "$out/tiles.db" || continue
      c -q run --variant sm90_h12_fitted_unclustered --variant sm90_h12_rows64 \
        --variant sm90_h12_rows64_sk4 --variant sm90_h12_rows64_sk4_swapped \
        --variant sm90_h12_rows64_n64 --variant sm90_h12_rows64_n64_swapped \
        --variant sm90_h12_rows64_n8_swapped --variant sm90_h12_rows64_n64_unclustered \
        --variant sm90_h12_rows64_n8 --variant sm90_h12_n16_swapped --variant sm90_h12_n128 \
        --variant sm90_s9_deeper_split --variant sm90_s11_ring --variant cublas_bf16 \
        --regime burst --verify \
        --shape 128x4096x4096 --shape 128x4096x14336 --shape 128x14336x4096 \
        --shape 256x4096x4096 --shape 512x4096x4096 --shape 512x14336x4096 \
        --shape 512x4096x14336 --shape 4096x128x4096 --shape 4096x128x14336 \
        --shape 14336x128x4096 --shape 4096x512x4096 --shape 14336x512x4096 \
        --shape 16x4096x4096 --shape 16x4096x14336 --shape 16x14336x4096 \
        --shape 4096x16x4096 --shape 4096x16x14336 --shape 14336x16x4096 \
        --tag small-tiles >>"$log" 2>&1
      say "tiles exit $? ($(elapsed))"
      stop_daemon
      ;;
    counters)
      start_daemon "$out/counters.db" || continue
      c -q run --variant sm90_s9_deeper_split --variant sm90_s11_ring --variant cublas_bf16 \
        --variant cublas_bf16_best --variant sm90_h12_rows64_n64 \
        --shape 128x4096x4096 --shape 16x4096x4096 --shape 16x14336x4096 --shape 1x4096x4096 \
        --regime burst --profile --profile-metrics default,memory,stalls \
        --tag small-counters >>"$log" 2>&1
      say "counters (small shapes) exit $? ($(elapsed))"
      c -q run --variant sm90_h12_fitted_unclustered --variant cublas_bf16 --shape 4096 \
        --regime burst --profile --profile-metrics default,tensor,memory,stalls \
        --tag large-counters >>"$log" 2>&1
      say "counters (4096^3) exit $? ($(elapsed))"
      stop_daemon
      ;;
    gaps)
      start_daemon "$out/gaps.db" || continue
      c -q run --variant sm90_s12_buckets --variant sm90_s11_ring --variant cublas_bf16 \
        --variant cublas_bf16_best --variant sm90_h12_rows64_sk4 \
        --variant sm90_h12_rows64_n64_unclustered --variant sm90_h12_rows64_n8_swapped \
        --variant sm90_h12_n16_swapped --variant sm90_h12_n128 --variant sm90_h12_m192_n128_swapped \
        --variant sm90_h12_m192_n128_quads --shape 16x14336x4096 --shape 128x14336x4096 --shape 16x4096x4096 \
        --regime burst --profile --profile-metrics default,memory,stalls \
        --tag small-gaps >>"$log" 2>&1
      say "gaps exit $? ($(elapsed))"
      stop_daemon
      ;;
    quads-*)
      burst_run "quads-$r" --variant sm90_h12_m192_n128_quads \
        --variant sm90_h12_m192_n128_swapped --variant sm90_h12_n128 --variant sm90_s12_buckets \
        --variant sm90_s11_ring --variant cublas_bf16 --variant cublas_bf16_best \
        --shape 128x14336x4096 --shape 128x4096x4096 --shape 128x4096x14336 \
        --shape 512x14336x4096 --rounds 3
      ;;
    n112-*)
      burst_run "n112-$r" --variant sm90_h12_n112 --variant sm90_h12_n128 \
        --variant sm90_h12_n128_all_sms --variant sm90_h12_rows64_n64_unclustered_all_sms \
        --variant sm90_h12_rows64_n64_unclustered --variant sm90_h12_rows64_n8_swapped_all_sms \
        --variant sm90_h12_rows64_n8_swapped \
        --variant sm90_h12_n16_swapped_all_sms --variant sm90_h12_n16_swapped \
        --variant sm90_s12_buckets --variant sm90_s11_ring --variant cublas_bf16 \
        --variant cublas_bf16_best --shape 128x14336x4096 --shape 128x4096x4096 \
        --shape 128x4096x14336 --shape 16x14336x4096 --shape 512x14336x4096 \
        --shape 16x4096x4096 --rounds 3
      ;;
    pairs-*)
      burst_run "pairs-$r" --variant sm90_h12_rows64_n8_swapped_pairs \
        --variant sm90_h12_rows64_n8_swapped --variant sm90_h12_rows64_n8_pairs \
        --variant sm90_h12_rows64_n8 --variant sm90_h12_n16_swapped --variant sm90_s12_buckets \
        --variant sm90_s11_ring --variant cublas_bf16 --variant cublas_bf16_best \
        --shape 16x4096x4096 --shape 16x4096x14336 --shape 16x14336x4096 --shape 4096x16x4096 \
        --shape 4096x16x14336 --shape 14336x16x4096 --rounds 4 --fresh-inputs
      ;;
    ring-*)
      burst_run "ring-$r" --variant sm90_s9_deeper_split --variant sm90_s11_ring \
        --variant cublas_bf16 --variant cublas_bf16_best --rounds 1 "${ring_shapes[@]}"
      ;;
    gemv)
      examples=$here/../examples/user-kernels
      start_user_daemon "$out/gemv.db" || continue
      c kernel add "$examples/gemv_rows.cu" --manifest "$examples/gemv_rows.toml" >>"$log" 2>&1
      c -q run --variant 'user.gemv_rows.rows=16.*' --variant sm90_s3_split_k \
        --variant cublas_bf16 --rounds 1 --regime burst --shape 1x4096x4096 \
        --shape 16x4096x4096 --shape 1x14336x4096 --shape 16x14336x4096 \
        --shape 1x4096x14336 --shape 16x4096x14336 --tag gemv-rows >>"$log" 2>&1
      say "gemv_rows beside S3 and cuBLAS: exit $? ($(elapsed))"
      stop_daemon
      rm -f "$out/user.toml"
      ;;
    roof | roof-*)
      general=$here/../examples/user-kernels/general
      start_user_daemon "$out/$phase.db" || continue
      c kernel add "$general/stream_sum.cu" --manifest "$general/stream_sum.toml" >>"$log" 2>&1
      c -q run --variant 'user.streamsum.*' --size rows=4096,cols=4096 \
        --size rows=14336,cols=4096 --size rows=4096,cols=14336 --rounds 1 --regime burst \
        --tag stream-roof >>"$log" 2>&1
      say "stream_sum at the M <= 16 shapes' bytes: exit $? ($(elapsed))"
      if [[ $phase == roof-* ]]; then  # the two shapes below 80% beside it, in the same minute
        c -q sweep --preset serving --shape 1x4096x4096 --shape 16x4096x4096 --regime burst \
          --verify --rounds 1 --tag "roof-shapes-$r" >>"$log" 2>&1
        say "the serving preset at 1x4096x4096 and 16x4096x4096: exit $? ($(elapsed))"
      fi
      stop_daemon
      rm -f "$out/user.toml"
      ;;
    stalls)
      has_tune stalls || continue
      # The filter names H12's entry alone (sm90_tune always runs cuBLAS too); an entry name
      # that matches nothing leaves cuBLAS alone.
      "$here/sm90-ncu-stalls.sh" "$bundle" "$out" 4096 4096 4096 \
        "H12 sm90_h12_fitted_unclustered" Sm90WgmmaKernel stalls-h12 >>"$log" 2>&1
      say "stalls of H12 at 4096^3: exit $? ($(elapsed))"
      "$here/sm90-ncu-stalls.sh" "$bundle" "$out" 4096 4096 4096 "no entry" nvjet \
        stalls-cublas >>"$log" 2>&1
      say "stalls of cuBLAS at 4096^3: exit $? ($(elapsed))"
      xz -T0 -9 "$out"/stalls-*-sass.csv 2>/dev/null
      ;;
    warpstores)
      has_tune warpstores || continue
      for i in 1 2 3; do  # "H12" names H12's entry and the per-warp configuration (and cuBLAS)
        timeout 60 "$bundle/bin/sm90_tune" 4096 4096 4096 50 H12 >"$out/warpstores-$i.txt" 2>&1
        say "warpstores run $i exit $?"
        grep -E 'cublas|H12|error|MISMATCH' "$out/warpstores-$i.txt" | tee -a "$log"
      done
      ;;
    windows)
      has_tune windows || continue
      for sets in 2 1; do  # cuBLAS beside it: a window level of its own would be the device's
        timeout 90 "$bundle/bin/sm90_tune" 16 4096 14336 50 n8_swapped --windows 60 --sets $sets \
          >"$out/windows-$sets.txt" 2>&1
        say "windows over $sets input sets exit $?"
        grep -E 'fastest first|error|MISMATCH' "$out/windows-$sets.txt" | tee -a "$log"
      done
      ;;
    procs-*)
      [[ $r =~ ^[1-9][0-9]*$ ]] || { say "procs-R: R must be a count, not '$r'"; continue; }
      for ((i = 1; i <= r; i++)); do
        start_daemon "$out/procs-$r.db" || break
        for pass in 1 2; do  # each run allocates its inputs; its two rounds share them
          c -q run --variant sm90_s12_buckets --variant sm90_s11_ring --variant cublas_bf16_best \
            --shape 16x4096x14336 --shape 16x14336x4096 --regime burst --verify --rounds 2 \
            --tag "procs-$i-$pass" >>"$log" 2>&1
          say "process $i, run $pass: exit $? ($(elapsed))"
        done
        stop_daemon
      done
      ;;
    levels-*)
      [[ $r =~ ^[1-9][0-9]*$ ]] || { say "levels-R: R must be a count, not '$r'"; continue; }
      for ((i = 1; i <= r; i++)); do
        start_daemon "$out/levels-$r.db" || break
        for l2 in rotate flush-l2 hot-l2; do
          extra=()
          [[ $l2 == rotate ]] || extra=("--$l2")
          c -q run "${level_items[@]}" --rounds 4 "${extra[@]}" --tag "levels-$i-$l2" \
            >>"$log" 2>&1
          say "process $i, L2 $l2: exit $? ($(elapsed))"
        done
        stop_daemon
      done
      ;;
    fresh-*)
      [[ $r =~ ^[1-9][0-9]*$ ]] || { say "fresh-R: R must be a count, not '$r'"; continue; }
      for ((i = 1; i <= r; i++)); do
        start_daemon "$out/fresh-$r.db" || break
        c -q run "${level_items[@]}" --rounds 8 --fresh-inputs --tag "fresh-$i" >>"$log" 2>&1
        say "process $i, fresh inputs: exit $? ($(elapsed))"
        stop_daemon
      done
      ;;
    *) say "unknown phase $phase" ;;
  esac
  compress_databases  # after each phase: a call cut short keeps what ended compressed
done
say "done ($(elapsed))"
