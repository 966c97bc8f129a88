#!/usr/bin/env bash
# One pass on a GPU machine for the simt / tf32 / cublas-per-dtype work: GPU tests, SASS
# instruction counts of the simt and tf32 instances, standalone timing at 4096^3, 2048^3 and
# 8192^3, sanitizers on the small shapes (last: what a time limit cuts). The build dir needs
# --target device-tools (kernels_timing) too.
# Usage: scripts/ladders_device_run.sh DIR OUT_DIR, where DIR holds bin/ (ladders_gpu_tests and
# kernels_timing) and obj/ (simt_launchers.cu.o, tf32_launchers.cu.o).
set -u
dir=${1:-build/ladders-dev}
out=${2:-/tmp/ladders_out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv > "$out/gpu.txt" 2>&1
timeout 120 "$dir/bin/ladders_gpu_tests" > "$out/gpu_tests.txt" 2>&1
echo "ladders_gpu_tests rc=$?" >> "$out/gpu_tests.txt"
if [ -x "$dir/bin/kernels_gpu_tests" ]; then  # the bf16/fp16 cuBLAS entries share the launcher
  timeout 60 "$dir/bin/kernels_gpu_tests" --gtest_filter='KernelsGpu.AgainstFp64Reference' \
    > "$out/kernels_gpu_tests.txt" 2>&1
  echo "kernels_gpu_tests rc=$?" >> "$out/kernels_gpu_tests.txt"
fi
dump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for o in "$dir"/obj/*.o; do
  for arch in sm_80 sm_90; do
    "$dump" -sass -arch $arch "$o" > "$out/$(basename "$o" .cu.o).$arch.sass" 2>&1 || true
  done
done
python3 - "$out" <<'PY' > "$out/sass_summary.txt" 2>&1
import re, sys, glob, os
out = sys.argv[1]
pats = [("FFMA", r"\bFFMA\b"), ("HMMA.1688.F32.TF32", r"\bHMMA\.1688\.F32\.TF32\b"),
        ("HMMA(any)", r"\bHMMA\."), ("LDGSTS", r"\bLDGSTS"), ("LDSM", r"\bLDSM\."),
        ("LDS.128", r"\bLDS\.128\b"), ("LDS(32)", r"\bLDS(\.U)?\s"), ("STS.128", r"\bSTS\.128\b"),
        ("STS(32)", r"\bSTS\s"), ("LDG.128", r"\bLDG\.E\.128"), ("STG.128", r"\bSTG\.E\.128"),
        ("STG.64", r"\bSTG\.E\.64"), ("STG(32)", r"\bSTG\.E\s"), ("BAR", r"\bBAR\.SYNC"),
        ("LDL/STL", r"\b[LS]TL\b")]
for f in sorted(glob.glob(os.path.join(out, "*.sass"))):
    text = open(f).read()
    for fn in re.split(r"\n\s+Function : ", text)[1:]:
        name = fn.split("\n", 1)[0]
        m = re.search(r"(Simt|Tf32)GemmKernel.*?Config(.*?)EE", name)
        tag = (m.group(1) + m.group(2)) if m else name[:60]
        row = " ".join("%s=%d" % (k, len(re.findall(p, fn))) for k, p in pats)
        print(os.path.basename(f).split(".")[-2], tag, row)
PY
grep -hE "HMMA|LDGSTS|LDSM" "$out"/tf32_launchers.sm_90.sass | sort -u -k2,2 | head -20 > "$out/sass_samples.txt" 2>&1
grep -hoE "(FFMA|LDS|STS|STG|LDG)[.A-Z0-9]*" "$out"/simt_launchers.sm_90.sass | sort | uniq -c >> "$out/sass_samples.txt" 2>&1
rm -f "$out"/*.sass
# Few files: the device tool returns a limited number of them.
# Each dtype against its cublas_<dtype>; int8 times cublas_int8 (cuBLASLt) alone.
for size in 4096 2048 8192; do
  for run in "fp32 simt_" "tf32 tf32_" "int8 cublas_"; do
    read -r dtype prefix <<< "$run"
    timeout 60 "$dir/bin/kernels_timing" $size $size $size $dtype $prefix 20 >> "$out/timing.txt" 2>&1
    echo "rc=$?" >> "$out/timing.txt"
  done
done
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [ -x "$san" ]; then
  timeout 40 "$san" --tool memcheck "$dir/bin/ladders_gpu_tests" \
    --gtest_filter='*AgainstFp64Reference*:*Int8*' > "$out/sanitizers.txt" 2>&1
  echo "memcheck rc=$?" >> "$out/sanitizers.txt"
  timeout 30 "$san" --tool racecheck --racecheck-report hazard "$dir/bin/ladders_gpu_tests" \
    --gtest_filter='*SimtAgainstFp64Reference*:*Tf32AgainstFp64Reference*' >> "$out/sanitizers.txt" 2>&1
  echo "racecheck rc=$?" >> "$out/sanitizers.txt"
fi
