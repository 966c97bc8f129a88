#!/usr/bin/env bash
# One device call that gathers every GPU figure the open issues ask for, over a bundle made by
#   deploy/make-bundle.sh build/default bundle <test binaries>
# Observe mode only: nothing here asks for a clock lock, and nothing changes GPU settings.
# Writes at most 8 files to OUT (the device tool's limit), each as soon as it is complete:
#   tests.log  session.log  results.db (+ -wal, -shm while the daemon runs)  sass.txt
#   report.md  report.html
#   scripts/gpu-session.sh BUNDLE OUT
set -uo pipefail
bundle=$(cd "${1:?usage: gpu-session.sh BUNDLE OUT}" && pwd)
out=${2:?usage: gpu-session.sh BUNDLE OUT}
mkdir -p "$out"
export ABLATION_TEST_BIN_DIR=$bundle/bin
export PATH=$PATH:/usr/local/cuda/bin
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $d ]] && export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
done
log=$out/session.log
say() { echo "== $*" | tee -a "$log"; }
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start ))s; }

say "GPU $(nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader)"

# ---- 1. GPU tests (each bounded; a hang must not eat the session)
for t in kernels_gpu_tests worker_gpu_tests gpu_e2e_tests planted_bugs_tests ladders_gpu_tests pipe_gpu_tests; do
  [[ -x $bundle/bin/$t ]] || { echo "$t: not in the bundle" >>"$out/tests.log"; continue; }
  echo "===== $t" >>"$out/tests.log"
  timeout 150 "$bundle/bin/$t" --gtest_brief=1 >>"$out/tests.log" 2>&1
  echo "===== $t exit $?" >>"$out/tests.log"
  say "$t done ($(elapsed)): $(grep -E '^\[  (PASSED|FAILED) ' "$out/tests.log" | tail -1)"
done

# ---- 2. the daemon, on a fresh database, with the real worker and NVML (observe)
db=$out/results.db
port=50053
"$bundle/bin/ablationd" --listen 127.0.0.1:$port --db "$db" >/tmp/ablationd-session.log 2>&1 &
daemon=$!
c() { "$bundle/bin/ablation-client" --server 127.0.0.1:$port "$@"; }
for _ in $(seq 1 300); do c device >/dev/null 2>&1 && break; sleep 0.2; done
c device >>"$log" 2>&1

# Issue 4: the same 8 ablation variants and cuBLAS at 4096^3, twice.
eight=(--variant abl_L0_R1_bl0_s1_sw1 --variant abl_L1_R1_bl0_s1_sw1 --variant abl_L0_R1_bl0_s2_sw1
       --variant abl_L1_R1_bl0_s2_sw1 --variant abl_L1_R1_bl0_s3_sw1 --variant abl_L1_R1_bl0_s4_sw1
       --variant abl_L1_R1_bl0_s4_sw1_rb1 --variant abl_L1_R0_bl1_s3_sw1 --variant cublas_bf16)
for tag in issue4-a issue4-b; do
  say "issue 4 run $tag ($(elapsed))"
  c -q run "${eight[@]}" --shape 4096x4096x4096 --tag "$tag" >>"$log" 2>&1
done

# Issue 3: the smem2reg micro-benchmark through the same RunAblation path.
say "smem2reg through the daemon ($(elapsed))"
c -q run --variant 'smem2reg_*' --shape 4096x4096x4096 --tag smem2reg >>"$log" 2>&1

# Issue 5: SASS verdicts of every pipe_ variant (and two ablation ones), and the advice.
say "SASS ($(elapsed))"
for v in $(c variants 'pipe_*' --format csv | tail -n +2 | cut -d, -f1) abl_L0_R1_bl0_s1_sw1 abl_L1_R1_bl0_s3_sw1; do
  dt=""
  case $v in pipe_*_f16_*) dt=fp16 ;; pipe_*_i8_*) dt=int8 ;; pipe_*_f32_*) dt=fp32 ;; *) dt=bf16 ;; esac
  echo "----- $v" >>"$out/sass.txt"
  timeout 60 "$bundle/bin/ablation-client" --server 127.0.0.1:$port sass "$v" --dtype "$dt" >>"$out/sass.txt" 2>&1
done

# Issue 6 (and 5's tables): one full run, then two nightly-style runs.
say "full sweep ($(elapsed))"
c sweep --preset full --tag full >>"$log" 2>&1
say "nightly 1 ($(elapsed))"
c -q sweep --preset nightly --tag nightly >>"$log" 2>&1
say "nightly 2 ($(elapsed))"
c -q sweep --preset nightly --tag nightly >>"$log" 2>&1

ids=$(c runs --format csv --limit 20 | tail -n +2 | cut -d, -f1)
full=$(c runs --tag full --format csv --limit 1 | tail -n +2 | cut -d, -f1)
n2=$(c runs --tag nightly --format csv --limit 2 | tail -n +2 | sed -n 1p | cut -d, -f1)
n1=$(c runs --tag nightly --format csv --limit 2 | tail -n +2 | sed -n 2p | cut -d, -f1)
a=$(c runs --tag issue4-a --format csv --limit 1 | tail -n +2 | cut -d, -f1)
b=$(c runs --tag issue4-b --format csv --limit 1 | tail -n +2 | cut -d, -f1)
{
  echo "== compare nightly $n1 -> $n2"; c compare "$n1" "$n2"; echo "exit $?"
  echo "== compare issue4 $a -> $b"; c compare "$a" "$b"; echo "exit $?"
  echo "== advise fp16 64x64x16 sm_90"; c advise --bm 64 --bn 64 --bk 16 --dtype fp16 --arch sm_90
  echo "== advise int8 128x128x32 sm_86"; c advise --bm 128 --bn 128 --bk 32 --dtype int8 --arch sm_86
  for g in sm_80 sm_86 sm_90; do echo "== budget L1_R1_s4 $g"; c budget L1_R1_s4 --arch $g; done
} >>"$log" 2>&1
c report --run "$full" --format md >"$out/report.md" 2>>"$log"
c report --run "$full" --format html >"$out/report.html" 2>>"$log"
say "runs: $(echo $ids | tr '\n' ' ') (full $full, nightly $n1 $n2, issue4 $a $b); done at $(elapsed)"
kill -TERM $daemon; wait $daemon
grep -E " (warn|error) " /tmp/ablationd-session.log | tail -20 >>"$log"
