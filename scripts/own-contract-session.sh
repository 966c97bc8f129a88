#!/usr/bin/env bash
# Kernels of their own contract on a GPU node (kernels/user/README.md, "A kernel's own contract"),
# in phases that each leave a results database in OUT, over a bundle made by
# deploy/make-bundle.sh. Observe mode only: nothing here asks for a clock lock or changes GPU
# settings.
#   scripts/own-contract-session.sh BUNDLE OUT PHASE...
# Phases:
#   examples  every worked example of examples/user-kernels/general added, verified against its
#             reference, timed (sustained, 3 rounds) at its default sizes, and its ladder swept;
#             the device's measured bandwidth (Hello) beside an independent one: a 1 GiB
#             device-to-device copy timed with CUDA events through torch
#   cheats    every planted cheat of examples/user-kernels/general/cheats run with --verify,
#             each row's status and message kept (PASS/FAIL lines: caught or not)
#   triton    a row softmax written in Triton emitted as PTX (examples/user-kernels/ptx/
#             triton_row_softmax.py) at 4 and 8 warps with its manifest, added as PTX and run
#             verified against the built-in row softmax beside the CUDA example (3 rounds)
#   edits     the edit loop: the tiled GEMM example run, edited (its tiles kept in bf16, not
#             float) and added as version 2, the two versions run paired three separate times
#             (2048^3, 3 rounds each, each run's report naming the change with its interval), the
#             plain name run again and `compare` naming the build change between the two
#   hang      the planted kernel that never ends (tests/e2e/gpu/user_kernels/hangs) run, then the
#             softmax example: the first recorded failed, the second measuring normally
#   sanitize  compute-sanitizer (memcheck, then racecheck) around the worker (a wrapper given as
#             --worker) over every example and the Triton softmax at small sizes, verified;
#             each tool's ERROR SUMMARY kept
# DEADLINE=S (seconds since the start) skips a phase that would end after it. Every database
# ends compressed as OUT/NAME.db.xz.
set -uo pipefail
port=50055
# shellcheck source=scripts/phased-session.sh
. "$(dirname "$0")/phased-session.sh"
general=$here/../examples/user-kernels/general
printf '[user_kernels]\ncompiler = "%s"\nadd_role = "run"\n' "$bundle/bin/ablation-compile" \
  >"$out/user.toml"

usual() { case $1 in examples) echo 300 ;; cheats) echo 150 ;; triton) echo 120 ;; hang) echo 90 ;; edits) echo 150 ;; sanitize) echo 240 ;; *) echo 60 ;; esac; }
check() {  # check NAME COMMAND...: PASS when the command succeeds
  if "${@:2}" >>"$log" 2>&1; then say "PASS $1"; else say "FAIL $1"; fi
}

for phase in "$@"; do
  starts "$phase" "$(usual "$phase")" "$deadline" || continue
  case $phase in
    examples)
      CONFIG=$out/user.toml start_daemon "$out/examples.db" || continue
      python3 - >>"$log" 2>&1 <<'PY'
import statistics, torch
n = 1 << 30
src = torch.empty(n, dtype=torch.uint8, device="cuda").fill_(90)
dst = torch.empty_like(src)
times = []
for i in range(23):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); dst.copy_(src); b.record(); b.synchronize()
    if i >= 3: times.append(a.elapsed_time(b))
print(f"independent bandwidth: a 1 GiB device-to-device copy through torch, median of 20: "
      f"{2 * n / (statistics.median(times) * 1e-3) / 1e9:.0f} GB/s (read + written)")
PY
      say "$(grep 'independent bandwidth' "$log" | tail -1)"
      for k in row_softmax rms_norm row_sum gemm_bias_relu; do
        c kernel add "$general/$k.cu" --manifest "$general/$k.toml" >>"$log" 2>&1
        say "kernel add $k: exit $?"
      done
      for kernel in softmax rmsnorm rowsum gemm_bias_relu; do
        c -q run --variant "user.$kernel.*" --verify --rounds 3 --tag "own-$kernel" >>"$log" 2>&1
        say "run user.$kernel.*: exit $? ($(elapsed))"
        c -q sweep --preset "user.$kernel" --rounds 3 --tag "ladder-$kernel" >>"$log" 2>&1
        say "sweep user.$kernel: exit $? ($(elapsed))"
      done
      c --format json results --limit 1 >"$out/bandwidth.json" 2>&1
      say "measured bandwidth: $(grep -o '"roofline_bandwidth":[0-9.e+]*' "$out/bandwidth.json")"
      c --format csv results --limit 0 >"$out/examples.csv" 2>&1
      check "every row ok, verified and on its roofline" \
        bash -c "! grep -q ',failed,' '$out/examples.csv' && grep -q ',memory,\|,compute,' '$out/examples.csv'"
      stop_daemon
      ;;
    cheats)
      CONFIG=$out/user.toml start_daemon "$out/cheats.db" || continue
      c kernel add "$general/cheats/softmax_cheats.cu" \
        --manifest "$general/cheats/softmax_cheats.toml" >>"$log" 2>&1
      for cheat in 1 2 3 4 5 6; do
        c -q run --variant "user.softmax_cheat.cheat=$cheat" --verify --rounds 1 \
          --tag "cheat-$cheat" >>"$log" 2>&1
        c --format csv results "$(latest)" >"$out/cheat-$cheat.csv" 2>&1
        say "cheat $cheat: $(tail -n +2 "$out/cheat-$cheat.csv" | cut -c1-400)"
      done
      stop_daemon
      ;;
    triton)
      mkdir -p "$out/triton"
      for warps in 4 8; do
        python3 "$here/../examples/user-kernels/ptx/triton_row_softmax.py" "$out/triton" 4096 \
          "$warps" >>"$log" 2>&1
        say "triton softmax at $warps warps: exit $? $(cat "$out/triton/triton_softmax_w$warps.json")"
      done
      CONFIG=$out/user.toml start_daemon "$out/triton.db" || continue
      c kernel add "$general/row_softmax.cu" --manifest "$general/row_softmax.toml" >>"$log" 2>&1
      for warps in 4 8; do
        c kernel add "$out/triton/triton_softmax_w$warps.ptx" \
          --manifest "$out/triton/triton_softmax_w$warps.toml" >>"$log" 2>&1
        say "kernel add triton_softmax_w$warps: exit $?"
      done
      c -q run --variant 'user.softmax.*' --variant 'user.triton_softmax_w4.*' \
        --variant 'user.triton_softmax_w8.*' --verify --rounds 3 --tag triton-beside-cuda \
        >>"$log" 2>&1
      say "run triton beside cuda: exit $? ($(elapsed))"
      c --format csv results "$(latest)" >"$out/triton.csv" 2>&1
      say "$(cut -d, -f5,7,14,15,22,23 "$out/triton.csv" | head -8)"
      stop_daemon
      ;;
    edits)
      CONFIG=$out/user.toml start_daemon "$out/edits.db" || continue
      ex=$here/../examples/user-kernels
      c kernel add "$ex/tiled_gemm.cu" --manifest "$ex/tiled_gemm.toml" >>"$log" 2>&1
      c -q run --variant 'user.tiled.pad=1.unroll=4' --shape 2048 --rounds 3 --tag before-edit \
        >>"$log" 2>&1
      before=$(latest)
      "$ex/edit-tiled-bf16.sh" "$ex/tiled_gemm.cu" >"$out/tiled_gemm.cu"
      c kernel add "$out/tiled_gemm.cu" --manifest "$ex/tiled_gemm.toml" >>"$log" 2>&1
      say "version 2 added: exit $?"
      for r in 1 2 3; do
        c -q run --variant 'user.tiled@1.pad=1.unroll=4' --variant 'user.tiled.pad=1.unroll=4' \
          --shape 2048 --rounds 3 --tag "edit-$r" >>"$log" 2>&1
        c report "$(latest)" --format md >"$out/edit-$r.md" 2>&1
        say "paired versions, run $r: $(grep '^| v2 ' "$out/edit-$r.md" | head -1 | cut -c1-400)"
      done
      c -q run --variant 'user.tiled.pad=1.unroll=4' --shape 2048 --rounds 3 --tag after-edit \
        >>"$log" 2>&1
      c compare "$before" "$(latest)" >"$out/edit-compare.txt" 2>&1
      say "compare: $(grep -i 'other code' "$out/edit-compare.txt" | head -1)"
      stop_daemon
      ;;
    hang)
      CONFIG=$out/user.toml start_daemon "$out/hang.db" || continue
      planted=$here/../tests/e2e/gpu/user_kernels
      c kernel add "$planted/hangs.cu" --manifest "$planted/hangs.toml" >>"$log" 2>&1
      c kernel add "$general/row_softmax.cu" --manifest "$general/row_softmax.toml" >>"$log" 2>&1
      t0=$(date +%s)
      c -q run --variant user.hangs --shape 256 --tag planted-hang >>"$log" 2>&1
      say "the hang: exit $? after $(($(date +%s) - t0)) s: $(c --format csv results "$(latest)" | tail -n +2 | cut -c1-300)"
      c -q run --variant 'user.softmax.threads=128' --verify --tag after-hang >>"$log" 2>&1
      say "after the hang: exit $?: $(c --format csv results "$(latest)" | tail -n +2 | cut -c1-300)"
      stop_daemon
      ;;
    sanitize)
      for tool in memcheck racecheck; do
        printf '#!/bin/sh\nexec compute-sanitizer --tool %s --log-file %s --error-exitcode 0 %s "$@"\n' \
          "$tool" "$out/sanitizer-$tool.%%p.log" "$bundle/bin/ablation-worker" >"$out/san-worker.sh"
        chmod +x "$out/san-worker.sh"
        "$bundle/bin/ablationd" --listen "127.0.0.1:$port" --db "$out/sanitize-$tool.db" \
          --config "$out/user.toml" --worker "$out/san-worker.sh" >>"$out/ablationd.log" 2>&1 &
        daemon=$!
        for _ in $(seq 1 300); do c device >/dev/null 2>&1 && break; sleep 0.2; done
        for k in row_softmax rms_norm row_sum gemm_bias_relu; do
          c kernel add "$general/$k.cu" --manifest "$general/$k.toml" >>"$log" 2>&1
        done
        [[ -f $out/triton/triton_softmax_w8.ptx ]] &&
          c kernel add "$out/triton/triton_softmax_w8.ptx" \
            --manifest "$out/triton/triton_softmax_w8.toml" >>"$log" 2>&1
        c -q run --variant 'user.softmax.*' --variant 'user.rmsnorm.*' --variant 'user.rowsum.*' \
          --variant 'user.triton_softmax_w8.*' --size rows=256,cols=1024 --verify --rounds 1 \
          --tag "sanitize-$tool" >>"$log" 2>&1
        say "$tool over the row kernels: exit $? ($(elapsed))"
        c -q run --variant 'user.gemm_bias_relu.*' --size m=256,n=256,k=256 --verify --rounds 1 \
          --tag "sanitize-$tool" >>"$log" 2>&1
        say "$tool over the fused GEMM: exit $? ($(elapsed))"
        stop_daemon
        say "$tool: $(cat "$out"/sanitizer-$tool.*.log 2>/dev/null | grep -h 'ERROR SUMMARY' | sort | uniq -c | tr '\n' ' ')"
        rm -f "$out/sanitize-$tool.db"
      done
      ;;
    *) say "unknown phase $phase" ;;
  esac
  compress_databases  # after each phase: a call cut short keeps what ended compressed
done
say "done ($(elapsed))"
