#!/usr/bin/env bash
# One pass of the pipe_ family on a GPU machine over a carried build dir: GPU tests, the 4096^3
# timing table of every type, and (where the machine has cuobjdump) the SASS of the instances.
# Usage: scripts/pipe_device_run.sh BUILD_DIR OUT_DIR   (BUILD_DIR built with --target device-tools too)
set -u
build=${1:-build/pipe}
out=${2:-/tmp/pipe_out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv \
  > "$out/gpu.txt" 2>&1
timeout 100 "$build/bin/pipe_gpu_tests" > "$out/gpu_tests.txt" 2>&1
echo "gpu tests rc=$?" >> "$out/gpu_tests.txt"
: > "$out/timing_4096.txt"
for dtype in fp16 int8 fp32; do
  timeout 45 "$build/bin/kernels_timing" 4096 4096 4096 $dtype pipe_ 20 >> "$out/timing_4096.txt" 2>&1
  echo "timing $dtype rc=$?" >> "$out/timing_4096.txt"
done
dump=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
if [ -x "$dump" ]; then
  for o in "$build"/kernels/CMakeFiles/ablation_kernels.dir/pipe/pipe_*.cu.o; do
    for a in sm_80 sm_90; do
      "$dump" -sass -arch $a "$o" > "$out/$(basename "$o" .cu.o)_$a.sass" 2>&1 || true
    done
  done
fi
