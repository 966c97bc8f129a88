#!/usr/bin/env bash
# Emits examples/user-kernels/ptx/tiled_gemm_u4.ptx: tiled_gemm.cu at PAD = 1, UNROLL = 4, as PTX
# for compute_80 (any GPU from the A100 on assembles it), by the toolkit's nvcc: a PTX kernel from
# a compiler other than the service's, added with `language = "ptx"` (tiled_gemm_u4.toml). A PTX
# emitted by a Python DSL is made by triton_row_softmax.py on the GPU node, where Triton is.
#   examples/user-kernels/ptx/make-ptx.sh [NVCC]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${1:-/usr/local/cuda/bin/nvcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# nvcc does not expand a macro in `#pragma unroll N` (NVRTC does): the knob written in.
sed 's/#pragma unroll UNROLL/#pragma unroll 4/' "$here/../tiled_gemm.cu" >"$tmp/tiled_gemm.cu"
"$nvcc" -ptx -arch=compute_80 -DPAD=1 -DUNROLL=4 "$tmp/tiled_gemm.cu" -o "$here/tiled_gemm_u4.ptx"
