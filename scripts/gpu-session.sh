#!/usr/bin/env bash
# The figures that only a GPU node can give, in phases (below) that each fit one device call, over
# a bundle made by
#   cmake --build build/default --target device-tools     (kernels_timing, sm90_tune)
#   deploy/make-bundle.sh build/default bundle <test binaries and tools>
# Observe mode only: nothing here asks for a clock lock, and nothing changes GPU settings.
#   scripts/gpu-session.sh BUNDLE OUT PHASE...
# Phases:
#   tests   every GPU test binary in the bundle (each bounded)
#   main    the README's main job (scripts/demo.sh) at 4096^3
#   deltas  three separate runs of ladder A and of ladder B (3 rounds each), their reports, and a
#           compare of a ladder B run made under a background cuBLAS load against a quiet one
#   ragged  a pipe_ variant verified and timed at M, N, K all ragged (K not a multiple of 8)
#   full    the full preset with rounds, its wall time against its sampled GPU time
#   cost    all-ablation with 3 rounds: its wall time against its sampled GPU time (run_cost view)
#   metrics a Prometheus scrape (/metrics over HTTP, the IPv6 loopback where there is one) of the
#           daemon during a ladder-b sweep, and after
#   profiled the full preset with --profile: every item's counters, and the report with them (md, html)
#   hopper  the Hopper ladder (ladder-h, 3 rounds) with its report, and the SASS checks of every rung
#   shapes  the sm90 family at every shape: each rung verified at the shapes preset's 10 shapes and 5
#           ragged ones against cuBLAS and at 5 small ragged ones against the CPU's FP64 reference
#           (PASS/FAIL lines), then every rung and cuBLAS timed at the 15 (3 rounds; SHAPES_TIME=0:
#           verification only)
#   padding what padded rows cost (H10 and cuBLAS at 4096^3, K 4088, K 4089, N 4095), and the
#           stream-K rungs beside H8 and cuBLAS where there are fewer units than clusters (3 rounds)
#   idle    a worker killed while the GPU is idle (SIGKILL, as the OOM killer would): the daemon
#           must notice and restart it, and the next run must succeed with no failed measurement
#           (PASS/FAIL lines)
#   guard   the clock guard beside the real NVML (observe mode: nothing is locked): the daemon's
#           ablationd-guard child exists, the daemon is killed with SIGKILL during a run, the guard
#           ends on its own without touching NVML (nothing to reset), and a daemon started again
#           on the same database runs (PASS/FAIL lines)
#   fp8     the fp8 ladder: every fp8 rung and cublas_fp8 verified at 4096^3 and 8192^3 against
#           cuBLAS and at small ragged shapes against the CPU's FP64 reference of the dequantised
#           inputs; ladder-f8 and ladder-h (3 rounds each) in the sustained and the burst regime,
#           their reports; the SASS of every fp8 rung (QGMMA). PRESETS="ladder-f8" narrows the
#           sweeps, VERIFY=0 leaves out the verification
#   last    the last rungs beside their cuBLAS (the bars of 'ahead of cuBLAS'): M1, H11, H12, cublas_bf16;
#           F8 and cublas_fp8; at 4096^3 and 8192^3, 3 rounds, in the sustained and the burst
#           regime, RUNS separate runs (default 1); reports, CSVs and the SASS of H12 and F8
#   ncu     Nsight Compute counters (observe mode) of the last rungs against cuBLAS at 4096^3:
#           F8 and cublas_fp8, H12, H11 and cublas_bf16, M1 (the profile command's default, tensor,
#           memory and stalls sets)
#   nightly a series of nightly-style runs (deploy/nightly.sh: ladder-b, one round, sustained) on
#           one database, NIGHTS quiet ones (default 8), then one under a background GPU load
#           (a bf16 matmul loop in torch, kept through the night's rerun) and one quiet again;
#           every night's verdict JSON and Prometheus text, then `history` of the series (table,
#           CSV, HTML with the change points)
#   user    user kernels: the pipelining example beside the built-in pipe_ ladder and cuBLAS (3
#           rounds), mma_tiled, and the planted kernels (forgotten epilogue, a kept result, a hang),
#           each outcome checked (PASS/FAIL lines in user.txt)
# Each phase appends to OUT/session.log; the databases stay in OUT.
set -uo pipefail
bundle=$(cd "${1:?usage: gpu-session.sh BUNDLE OUT PHASE...}" && pwd)
out=${2:?usage: gpu-session.sh BUNDLE OUT PHASE...}
shift 2
port=50053
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/session-common.sh
. "$here/session-common.sh"

# Runs `ablation-client -q ARGS...` (a run or a sweep) and writes its report and results as
# OUT/NAME.md and OUT/NAME.csv.
run_and_report() {
  local name=$1 id
  shift
  say "$name ($(elapsed))"
  c -q "$@" >>"$log" 2>&1
  say "$name exit $? ($(elapsed))"
  id=$(latest)
  c report --run "$id" --format md >"$out/$name.md" 2>>"$log"
  c --format csv results "$id" >"$out/$name.csv" 2>>"$log"
}

# The SASS check of each variant named, into OUT/sass-VARIANT.txt, with its GMMA counts logged.
sass_of() {
  local v
  for v in "$@"; do
    c sass "$v" >"$out/sass-$v.txt" 2>&1
    say "sass $v exit $?: $(grep -o '[HQ]GMMA[^ ]*' "$out/sass-$v.txt" | sort | uniq -c | head -3 | tr '\n' ' ')"
  done
}

say "GPU $(nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader)"
for phase in "$@"; do
  case $phase in
    tests)
      for t in kernels_gpu_tests worker_gpu_tests gpu_e2e_tests planted_bugs_tests ladders_gpu_tests pipe_gpu_tests sm90_gpu_tests; do
        [[ -x $bundle/bin/$t ]] || { say "$t: not in the bundle"; continue; }
        timeout 150 "$bundle/bin/$t" --gtest_brief=1 >"$out/$t.log" 2>&1
        say "$t exit $? ($(elapsed)): $(grep -E '^\[  (PASSED|FAILED) ' "$out/$t.log" | tr '\n' ' ')"
      done
      ;;
    user)
      examples=$here/../examples/user-kernels
      planted=$here/../tests/e2e/gpu/user_kernels
      printf '[user_kernels]\ncompiler = "%s"\n' "$bundle/bin/ablation-compile" >"$out/user.toml"
      CONFIG=$out/user.toml start_daemon "$out/user.db" || continue
      u=$out/user.txt
      check() {  # check NAME COMMAND...: PASS when the command succeeds
        if "${@:2}" >>"$u" 2>&1; then say "PASS $1"; else say "FAIL $1"; fi
      }
      "$planted/make_forgot_epilogue.sh" "$examples/pipe_gemm.cu" >"$out/forgot_epilogue.cu"
      cp "$planted/forgot_epilogue.toml" "$out/forgot_epilogue.toml"
      for k in "$examples/pipe_gemm" "$examples/mma_tiled" "$out/forgot_epilogue" \
        "$planted/keeps_result" "$planted/hangs"; do
        t0=$(date +%s%N)
        c kernel add "$k.cu" --manifest "$k.toml" >>"$u" 2>&1
        say "kernel add $(basename "$k"): exit $? in $((($(date +%s%N) - t0) / 1000000)) ms"
      done
      c kernel show pipe >>"$u" 2>&1; c kernel show mma_tiled >>"$u" 2>&1
      say "pipelining example beside pipe_*_f16_128x128x32 and cuBLAS, 4096^3, 3 rounds ($(elapsed))"
      c run --variant 'user.pipe.*' --variant 'pipe_*_f16_128x128x32' --variant cublas_fp16 \
        --dtype fp16 --shape 4096 --rounds 3 --verify --tag user-pipe >>"$u" 2>&1
      pipe_run=$(latest)
      c show "$pipe_run" >"$out/user-pipe.txt" 2>&1
      c --format json results "$pipe_run" >"$out/user-pipe.json" 2>&1
      check "pipe: every row ok and verified" bash -c "! grep -q '\"status\":\"failed\"' '$out/user-pipe.json' && grep -q 'checked_launches' '$out/user-pipe.json'"
      c sass 'user.pipe.buffers=2.cpasync=1' --dtype fp16 >"$out/user-sass.txt" 2>&1
      say "sass of the user cpasync variant: exit $? ($(head -c 300 "$out/user-sass.txt" | tr '\n' ' '))"
      say "bit identity across the pipe knobs, against the baseline ($(elapsed))"
      c verify --variant 'user.pipe.*' --dtype fp16 --shape 4096 --shape 1000x999x997 \
        --against 'user.pipe.buffers=1.cpasync=0' --format csv >"$out/user-identity.csv" 2>&1
      check "pipe knobs bit-identical (tolerance 0)" \
        bash -c "awk -F, 'NR > 1 && \$8 == 0 && \$12 == \"true\"' '$out/user-identity.csv' | wc -l | grep -qx 8"
      say "the manifest's ladder as a preset: sweep --preset user.pipe, with counters ($(elapsed))"
      c presets user.pipe >"$out/user-preset.txt" 2>&1
      c -q sweep --preset user.pipe --profile --tag user-ladder >>"$u" 2>&1
      c report "$(latest)" --format md >"$out/user-ladder.md" 2>&1
      check "the ladder's report has its rungs" grep -q 'U2' "$out/user-ladder.md"
      check "counters of user variants" grep -q 'profile user.pipe.buffers=2.cpasync=1 fp16 4096x4096x4096: [1-9]' "$out/ablationd.log"
      say "mma_tiled beside cuBLAS, 4096^3 ($(elapsed))"
      c run --variant 'user.mma_tiled.*' --variant cublas_bf16 --shape 4096 --tag user-mma >>"$u" 2>&1
      c show "$(latest)" >"$out/user-mma.txt" 2>&1
      say "planted: the forgotten epilogue ($(elapsed))"
      c run --variant 'user.forgot_epilogue.*' --dtype fp16 --shape 1024 --tag planted >>"$u" 2>&1
      c --format json results "$(latest)" >"$out/user-epilogue.json" 2>&1
      check "forgotten epilogue: caught by verification, not timed" \
        bash -c "grep -q 'verification failed' '$out/user-epilogue.json' && ! grep -q '\"status\":\"ok\"' '$out/user-epilogue.json'"
      say "planted: a result kept from an earlier launch ($(elapsed))"
      c run --variant user.keeps_result --shape 1024 --tag planted >>"$u" 2>&1
      c --format json results "$(latest)" >"$out/user-kept.json" 2>&1
      check "kept result: caught by the timed-launch check" \
        bash -c "grep -q 'differs from cublas_bf16' '$out/user-kept.json' && ! grep -q '\"status\":\"ok\"' '$out/user-kept.json'"
      say "planted: a kernel that never ends ($(elapsed))"
      c run --variant user.hangs --shape 256 --tag planted >>"$u" 2>&1
      c --format json results "$(latest)" >"$out/user-hang.json" 2>&1
      check "hang: recorded as failed" bash -c "grep -q '\"status\":\"failed\"' '$out/user-hang.json'"
      c run --variant cublas_bf16 --shape 4096 --tag after-hang >>"$u" 2>&1
      c --format json results "$(latest)" >"$out/user-after-hang.json" 2>&1
      check "after the hang the daemon measures normally" grep -q '"status":"ok"' "$out/user-after-hang.json"
      say "user kernels done ($(elapsed))"
      stop_daemon
      ;;
    shapes)
      start_daemon "$out/shapes.db" || continue
      check() {  # check NAME COMMAND...: PASS when the command succeeds
        if "${@:2}" >>"$log" 2>&1; then say "PASS $1"; else say "FAIL $1"; fi
      }
      big=(); small=()
      for s in 512x512x256 512x512x512 512x512x1024 512x512x4096 512x512x8192 4096x4096x256 \
        4096x4096x512 4096x4096x1024 4096x4096x4096 4096x4096x8192 4000x4000x4000 \
        4096x4096x4000 128x8192x8192 1x4096x4096 4097x4095x4099; do big+=(--shape "$s"); done
      for s in 1x1x1 7x9x13 129x257x65 1000x999x997 128x1000x1000; do small+=(--shape "$s"); done
      say "verify every sm90 rung at 15 shapes against cuBLAS ($(elapsed))"
      c verify --variant 'sm90_*' "${big[@]}" --against cublas --format csv \
        >"$out/shapes-verify-cublas.csv" 2>&1
      say "verify exit $? ($(elapsed))"
      check "165 verifications against cuBLAS, every one passed" \
        bash -c "awk -F, 'NR > 1 && \$12 == \"true\"' '$out/shapes-verify-cublas.csv' | wc -l | grep -qx 165"
      say "verify every sm90 rung at 5 small ragged shapes against the FP64 reference ($(elapsed))"
      c verify --variant 'sm90_*' "${small[@]}" --against cpu --format csv \
        >"$out/shapes-verify-cpu.csv" 2>&1
      say "verify exit $? ($(elapsed))"
      check "55 verifications against FP64, every one passed" \
        bash -c "awk -F, 'NR > 1 && \$12 == \"true\"' '$out/shapes-verify-cpu.csv' | wc -l | grep -qx 55"
      if [[ ${SHAPES_TIME:-1} == 1 ]]; then
        say "every rung and cuBLAS at 15 shapes, 3 rounds ($(elapsed))"
        c -q run --variant 'sm90_*' --variant cublas_bf16 "${big[@]}" --rounds 3 --tag shapes \
          >>"$log" 2>&1
        say "run exit $? ($(elapsed))"
        c show "$(latest)" >"$out/shapes-show.txt" 2>&1
        c --format csv results "$(latest)" --limit 1000 >"$out/shapes-results.csv" 2>&1
      fi
      stop_daemon
      ;;
    padding)
      start_daemon "$out/padding.db" || continue
      say "what padded rows cost: H10 and cuBLAS at 4096^3, K 4088 (guarded), K 4089 (A, B padded), N 4095 (C padded) ($(elapsed))"
      c -q run --variant sm90_h10_epilogue_overlap --variant cublas_bf16 --shape 4096 \
        --shape 4096x4096x4088 --shape 4096x4096x4089 --shape 4096x4095x4096 --rounds 3 \
        --tag padding >>"$log" 2>&1
      say "run exit $? ($(elapsed))"
      c show "$(latest)" >"$out/padding-show.txt" 2>&1
      c --format csv results "$(latest)" --limit 1000 >"$out/padding-results.csv" 2>&1
      say "stream-K with fewer units than clusters: H8, H9, H10, cuBLAS ($(elapsed))"
      c -q run --variant sm90_h8_tma_store --variant sm90_h9_stream_k \
        --variant sm90_h10_epilogue_overlap --variant cublas_bf16 --shape 128x8192x8192 \
        --shape 1x4096x4096 --shape 512x512x1024 --shape 512x512x2048 --shape 512x512x4096 \
        --shape 512x512x8192 --rounds 3 --tag few-units >>"$log" 2>&1
      say "run exit $? ($(elapsed))"
      c show "$(latest)" >"$out/few-units-show.txt" 2>&1
      c --format csv results "$(latest)" --limit 1000 >"$out/few-units-results.csv" 2>&1
      stop_daemon
      ;;
    idle)
      start_daemon "$out/idle.db" || continue
      c run --variant cublas_bf16 --shape 1024 --tag before-kill >"$out/idle.txt" 2>&1
      worker=$(pgrep -f -n ablation-worker)
      say "killing the idle worker (pid ${worker:-none}) ($(elapsed))"
      [[ -n $worker ]] && kill -KILL "$worker"
      sleep 3
      grep -i "worker" "$out/ablationd.log" | tail -3 >>"$out/idle.txt"
      c run --variant cublas_bf16 --variant sm90_h10_epilogue_overlap --shape 4096 --tag after-kill \
        >>"$out/idle.txt" 2>&1
      rc=$?
      c --format csv results "$(latest)" >"$out/idle-results.csv" 2>&1
      if [[ $rc == 0 ]] && ! grep -q ',failed,' "$out/idle-results.csv"; then
        say "PASS the run after an idle worker's death succeeded (exit $rc)"
      else
        say "FAIL the run after an idle worker's death (exit $rc)"
      fi
      stop_daemon
      ;;
    guard)
      start_daemon "$out/guard.db" || continue
      guard=$(pgrep -P "$daemon" -x ablationd-guard)
      { echo "daemon $daemon, guard ${guard:-none}"; ps -o pid,ppid,comm,args -p "$daemon,${guard:-1}"; } \
        >"$out/guard.txt" 2>&1
      c run --variant cublas_bf16 --shape 8192 --tag killed >>"$out/guard.txt" 2>&1 &
      sleep 4
      kill -KILL "$daemon"; wait "$daemon" 2>/dev/null; daemon=""
      for _ in $(seq 1 50); do
        if [[ -z $guard ]] || ! kill -0 "$guard" 2>/dev/null; then break; fi
        sleep 0.1
      done
      wait
      grep -i "guard" "$out/ablationd.log" | tail -4 >>"$out/guard.txt"
      if [[ -z $guard ]]; then
        say "FAIL no ablationd-guard child of the daemon"
      elif kill -0 "$guard" 2>/dev/null; then
        say "FAIL the guard (pid $guard) outlived its daemon by 5 s"
      elif grep -q "clock lock(s) of daemon pid" "$out/ablationd.log" || [[ -e $out/guard.db.clocks ]]; then
        say "FAIL the guard reset something in observe mode, or a journal was left"
      else
        say "PASS the guard ended with its daemon and touched nothing"
      fi
      start_daemon "$out/guard.db" || continue
      if c run --variant cublas_bf16 --shape 4096 --tag after-kill >>"$out/guard.txt" 2>&1; then
        say "PASS a daemon started again on the same database runs"
      else
        say "FAIL the run after the restart"
      fi
      stop_daemon
      ;;
    main)
      say "main job ($(elapsed))"
      ABLATION_DB=$out/main.db ABLATION_LOG=$out/main-daemon.log ABLATION_PORT=50054 ABLATION_REPORT_DIR=$out \
        timeout 300 "$here/demo.sh" "$bundle/bin" 4096x4096x4096 >"$out/main-job.txt" 2>&1
      say "main job exit $? ($(elapsed))"
      ;;
    deltas)
      start_daemon "$out/deltas.db" || continue
      for i in 1 2 3; do
        for ladder in ladder-a ladder-b; do
          say "$ladder run $i ($(elapsed))"
          c -q sweep --preset "$ladder" --rounds 3 --tag "$ladder-$i" >>"$log" 2>&1
          c report "$(latest)" --format md >"$out/$ladder-$i.md" 2>>"$log"
        done
      done
      quiet=$(latest)
      say "ladder-b under a background cuBLAS load ($(elapsed))"
      "$bundle/bin/kernels_timing" 8192 8192 8192 bf16 cublas_ 1000000 >/dev/null 2>&1 &
      load=$!
      sleep 2
      c -q sweep --preset ladder-b --rounds 3 --tag loaded >>"$log" 2>&1
      kill "$load" 2>/dev/null; wait "$load" 2>/dev/null
      loaded=$(latest)
      { echo "== compare $quiet (quiet) -> $loaded (loaded)"; c compare "$quiet" "$loaded"; echo "exit $?"
        echo "== compare --strict"; c compare --strict "$quiet" "$loaded"; echo "exit $?"; } \
        >"$out/compare-loaded.txt" 2>&1
      stop_daemon
      ;;
    ragged)
      start_daemon "$out/ragged.db" || continue
      say "ragged pipe_ verify and time ($(elapsed))"
      c run --variant pipe_cpasync_f16_64x64x16 --variant pipe_baseline_f16_64x64x16 \
        --dtype fp16 --shape 1000x999x997 --shape 4099x4097x4093 --verify --tag ragged \
        >"$out/ragged.txt" 2>&1
      echo "exit $?" >>"$out/ragged.txt"
      c show "$(latest)" >>"$out/ragged.txt" 2>&1
      stop_daemon
      ;;
    full)
      start_daemon "$out/full.db" || continue
      say "full preset, 3 rounds ($(elapsed))"
      t0=$(date +%s.%N)
      c -q sweep --preset full --tag full >>"$log" 2>&1
      t1=$(date +%s.%N)
      id=$(latest)
      c report "$id" --format md >"$out/full-report.md" 2>>"$log"
      c report "$id" --format html >"$out/full-report.html" 2>>"$log"
      say "full: $(awk "BEGIN{print $t1 - $t0}") s wall for run $id"
      stop_daemon
      ;;
    cost)
      start_daemon "$out/cost.db" || continue
      say "all-ablation, 3 rounds ($(elapsed))"
      t0=$(date +%s.%N)
      c -q sweep --preset all-ablation --tag cost >>"$log" 2>&1
      t1=$(date +%s.%N)
      say "all-ablation: $(awk "BEGIN{print $t1 - $t0}") s wall for run $(latest)"
      python3 - "$out/cost.db" >>"$log" 2>&1 <<'PY'
import sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
cur = con.execute("SELECT * FROM run_cost ORDER BY run_id DESC LIMIT 1")
for name, value in zip([d[0] for d in cur.description], cur.fetchone()):
    print(f"  run_cost.{name} = {value}")
PY
      grep -E "cost:" "$out/ablationd.log" | tail -1 | tee -a "$log"
      stop_daemon
      ;;
    metrics)
      # Over the IPv6 loopback where the node has one (the endpoint serves both), else IPv4.
      host=127.0.0.1
      grep -q ' lo$' /proc/net/if_inet6 2>/dev/null && host='[::1]'
      say "metrics endpoint on $host:9465"
      "$bundle/bin/ablationd" --listen 127.0.0.1:$port --db "$out/metrics.db" \
        --metrics-listen "$host:9465" >>"$out/ablationd.log" 2>&1 &
      daemon=$!
      for _ in $(seq 1 300); do c device >/dev/null 2>&1 && break; sleep 0.2; done
      scrape() {
        python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen("http://" + sys.argv[1] + ":9465/metrics", timeout=5).read().decode())' "$host"
      }
      say "ladder-b sweep with a scrape during it ($(elapsed))"
      c -q sweep --preset ladder-b --rounds 3 --tag metrics >>"$log" 2>&1 &
      sweep=$!
      sleep 8
      scrape >"$out/metrics-during-sweep.txt" 2>&1
      say "scrape during the sweep: $(grep -c '^ablation' "$out/metrics-during-sweep.txt") samples"
      wait "$sweep"
      scrape >"$out/metrics-after-sweep.txt" 2>&1
      say "scrape after the sweep: $(grep -c '^ablation' "$out/metrics-after-sweep.txt") samples"
      stop_daemon
      ;;
    profiled)
      "$bundle/bin/ablationd" --listen 127.0.0.1:$port --db "$out/profiled.db" \
        --metrics-listen 127.0.0.1:9465 >>"$out/ablationd.log" 2>&1 &
      daemon=$!
      for _ in $(seq 1 300); do c device >/dev/null 2>&1 && break; sleep 0.2; done
      say "full preset with --profile, scraped while it runs ($(elapsed))"
      t0=$(date +%s.%N)
      c -q sweep --preset full --profile --tag profiled >>"$log" 2>&1 &
      sweep=$!
      # Scrape every 2 s while the sweep runs; keep the last scrape that saw the run running.
      while kill -0 "$sweep" 2>/dev/null; do
        sleep 2
        python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:9465/metrics", timeout=5).read().decode())' \
          >"$out/scrape.txt" 2>&1 || true
        grep -q '^ablationd_runs_running{gpu="0"} 1' "$out/scrape.txt" &&
          cp "$out/scrape.txt" "$out/metrics-during-profiled-sweep.txt"
      done
      wait "$sweep"
      t1=$(date +%s.%N)
      id=$(latest)
      c report "$id" --format md >"$out/profiled-report.md" 2>>"$log"
      c report "$id" --format html -o "$out/profiled-report.html" 2>>"$log"
      say "profiled full: $(awk "BEGIN{print $t1 - $t0}") s wall for run $id"
      stop_daemon
      ;;
    hopper)
      start_daemon "$out/hopper.db" || continue
      say "ladder-h, 3 rounds ($(elapsed))"
      c -q sweep --preset ladder-h --rounds 3 --tag ladder-h >>"$log" 2>&1
      say "ladder-h exit $? ($(elapsed))"
      id=$(latest)
      c report --run "$id" --format md >"$out/ladder-h.md" 2>>"$log"
      c show "$id" >"$out/ladder-h-show.txt" 2>&1
      for v in sm90_m1_mma sm90_h1_tma sm90_h2_wgmma sm90_h3_ws sm90_h4_persistent sm90_h5_mc2 \
        sm90_h6_async_release sm90_h7_l2order sm90_h8_tma_store sm90_h9_stream_k \
        sm90_h10_epilogue_overlap sm90_h11_fit_grid sm90_h12_fitted_unclustered; do
        c sass "$v" >"$out/sass-$v.txt" 2>&1
        say "sass $v exit $?"
      done
      stop_daemon
      ;;
    fp8)
      start_daemon "$out/fp8.db" || continue
      f8='sm90_fp8_*'
      [[ ${VERIFY:-1} == 0 ]] || {
      say "fp8 verify against cuBLAS at 4096^3 and 8192^3 ($(elapsed))"
      c verify --variant "$f8" --dtype fp8 --shape 4096 --shape 8192 --shape 4000 \
        --against cublas --format csv >"$out/fp8-verify-cublas.csv" 2>&1
      say "exit $?: $(grep -c ',passed,\|,true,' "$out/fp8-verify-cublas.csv") lines passed"
      c verify --variant "$f8" --dtype fp8 --shape 512x384x1024 --shape 129x257x143 \
        --shape 300x264x4104 --against cpu --format csv >"$out/fp8-verify-cpu.csv" 2>&1
      say "exit $?: $(grep -c ',passed,\|,true,' "$out/fp8-verify-cpu.csv") lines passed"
      # cuBLASLt's fp8 takes rows of 16 bytes only (k % 16, n % 8).
      c verify --variant cublas_fp8 --dtype fp8 --shape 512x384x1024 --shape 136x264x4096 \
        --against cpu --format csv >"$out/fp8-verify-cublas-cpu.csv" 2>&1
      say "exit $?: $(grep -c ',passed,\|,true,' "$out/fp8-verify-cublas-cpu.csv") lines passed"
      }
      for regime in sustained burst; do
        for preset in ${PRESETS:-ladder-f8 ladder-h}; do
          run_and_report "$preset-$regime" sweep --preset "$preset" --rounds 3 --regime "$regime" \
            --tag "$preset-$regime"
        done
      done
      sass_of sm90_fp8_f1_ws sm90_fp8_f8_fit_grid
      stop_daemon
      ;;
    last)
      start_daemon "$out/last.db" || continue
      for r in $(seq 1 "${RUNS:-1}"); do
        for regime in sustained burst; do
          for set in "bf16 sm90_m1_mma sm90_h11_fit_grid sm90_h12_fitted_unclustered cublas_bf16" \
            "fp8 sm90_fp8_f8_fit_grid cublas_fp8"; do
            read -r dt vs <<<"$set"
            args=()
            for v in $vs; do args+=(--variant "$v"); done
            run_and_report "last-$dt-$regime-$r" run "${args[@]}" --dtype "$dt" --shape 4096 \
              --shape 8192 --rounds 3 --regime "$regime" --tag "last-$dt-$regime-$r"
          done
        done
      done
      sass_of sm90_h12_fitted_unclustered sm90_fp8_f8_fit_grid
      stop_daemon
      ;;
    ncu)
      start_daemon "$out/ncu.db" || continue
      for pair in "fp8 sm90_fp8_f8_fit_grid cublas_fp8" \
        "bf16 sm90_h12_fitted_unclustered sm90_h11_fit_grid cublas_bf16 sm90_m1_mma"; do
        read -r dt vs <<<"$pair"
        say "profile $vs at 4096^3 ($(elapsed))"
        # shellcheck disable=SC2086
        c profile $vs --dtype "$dt" --shape 4096 -m default,tensor,memory,stalls \
          >"$out/profile-$dt.txt" 2>&1
        say "profile $dt exit $?"
      done
      stop_daemon
      ;;
    nightly)
      start_daemon "$out/nightly.db" || continue
      nd=$out/nightly
      mkdir -p "$nd"
      night() {  # night I: the nightly job as its unit runs it, bounded; prints its exit status
        ABLATION_SERVER=127.0.0.1:$port REPORT_DIR=$nd PRESET=ladder-b TAG=nightly \
          REGIME=sustained VERDICT_FILE=$nd/verdict-$1.json \
          METRICS_TEXTFILE=$nd/regressions-$1.prom \
          timeout 120 "$bundle/bin/ablationd-nightly" >"$nd/night-$1.log" 2>&1
        echo $?
      }
      n=${NIGHTS:-8}
      for i in $(seq 1 "$n"); do say "night $i, quiet: exit $(night "$i") ($(elapsed))"; done
      # The load: another process's bf16 GEMMs on the same GPU, as a co-tenant would run.
      timeout 300 python3 -c 'import torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
while True:
    b = a @ a
    torch.cuda.synchronize()' >"$nd/load.log" 2>&1 &
      load=$!
      sleep 3
      say "night $((n + 1)), a background GPU load: exit $(night $((n + 1))) ($(elapsed))"
      kill "$load" 2>/dev/null
      wait "$load" 2>/dev/null
      say "night $((n + 2)), quiet again: exit $(night $((n + 2))) ($(elapsed))"
      c history 'abl_*' --tag nightly >"$nd/history.txt" 2>&1
      c --format csv history 'abl_*' --tag nightly >"$nd/history.csv" 2>&1
      c --format html history 'abl_L1_R1_bl0_s3_sw1' --tag nightly -o "$nd/history.html" \
        >>"$log" 2>&1
      for f in "$nd"/verdict-*.json; do
        say "$(basename "$f"): $(python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); print({k: v[k] for k in v if k in ("verdict","confirmed","candidates","not_confirmed")})' "$f" 2>&1 | head -c 300)"
      done
      stop_daemon
      ;;
    *) say "unknown phase $phase" ;;
  esac
done
say "done ($(elapsed))"
