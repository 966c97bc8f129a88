#!/usr/bin/env bash
# Emits examples/user-kernels/cubin/row_softmax_t128.cubin: ../general/row_softmax.cu at
# THREADS = 128, built for sm_90a by the toolkit's nvcc (both its entry and its reference entry
# are kernels of it), and ptxas' -v report of that build beside it (row_softmax_t128.ptxas.txt),
# which the compiler tests hold the figures read from the cubin to. A kernel brought built, not
# as source, added with `language = "cubin"` (row_softmax_t128.toml).
#   examples/user-kernels/cubin/make-cubin.sh [NVCC]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${1:-/usr/local/cuda/bin/nvcc}
"$nvcc" -cubin -arch=sm_90a -Xptxas -v -DTHREADS=128 "$here/../general/row_softmax.cu" \
  -o "$here/row_softmax_t128.cubin" 2>"$here/row_softmax_t128.ptxas.txt"
