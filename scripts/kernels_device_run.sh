#!/usr/bin/env bash
# One pass on a GPU machine over a carried build dir: GPU tests, timing table, SASS check.
# Usage: scripts/kernels_device_run.sh BUILD_DIR OUT_DIR   (BUILD_DIR built with --target device-tools too)
set -u
build=${1:-build/kern}
out=${2:-/tmp/kernels_out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv > "$out/gpu.txt" 2>&1
timeout 300 "$build/bin/kernels_gpu_tests" > "$out/gpu_tests.txt" 2>&1
echo "gpu tests rc=$?" >> "$out/gpu_tests.txt"
timeout 120 "$build/bin/kernels_timing" 4096 4096 4096 bf16 abl_ 20 > "$out/timing_bf16_4096.txt" 2>&1
timeout 60 "$build/bin/kernels_timing" 4096 4096 4096 fp16 abl_L1_R1 20 > "$out/timing_fp16_4096.txt" 2>&1
# SASS: which instructions each slice's kernels contain.
dump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
for o in "$build"/kernels/CMakeFiles/ablation_kernels.dir/ablation/ablation_l*_s*.cu.o; do
  "$dump" -sass -arch sm_90 "$o" > "$out/$(basename "$o").sass" 2>&1 || true
done
python3 - "$out" <<'PY' > "$out/sass_summary.txt" 2>&1
import re, sys, glob, os
out = sys.argv[1]
for f in sorted(glob.glob(os.path.join(out, "*.sass"))):
    text = open(f).read()
    for fn in re.split(r"\n\s+Function : ", text)[1:]:
        name = fn.split("\n", 1)[0]
        m = re.search(r"ConfigILi(\d)ELi(\d)ELi(\d)ELi(\d)ELi(\d)ELi(\d)E", name)
        if not m or "bfloat16" not in name: continue
        c = lambda pat: len(re.findall(pat, fn))
        print("L%s_R%s_bl%s_s%s_sw%s_rb%s" % m.groups(), "HMMA", c(r"\bHMMA\."), "LDSM", c(r"\bLDSM\."),
              "LDGSTS", c(r"\bLDGSTS"), "LDG", c(r"\bLDG\.E"), "LDS", c(r"\bLDS\b|\bLDS\."), "STS", c(r"\bSTS\."),
              "STG128", c(r"\bSTG\.E\.128"), "LDL/STL", c(r"\b[LS]TL\b|\b[LS]TL\."))
PY
rm -f "$out"/*.sass
