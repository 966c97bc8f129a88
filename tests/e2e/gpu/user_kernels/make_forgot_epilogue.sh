#!/bin/sh
# Writes the planted bug of the pipelining example to stdout: examples/user-kernels/pipe_gemm.cu
# with its epilogue left out (the line after each "// Epilogue: the last tile" comment, the
# compute of the last K tile, which the pipelined loop loaded but never computed). Made from the
# example rather than kept as a copy, so that it is always the example's code but for that line.
#   make_forgot_epilogue.sh [PIPE_GEMM_CU] > forgot_epilogue.cu
set -eu
src=${1:-$(dirname "$0")/../../../../examples/user-kernels/pipe_gemm.cu}
sed -e '/\/\/ Epilogue: the last tile/{n;d;}' "$src"
