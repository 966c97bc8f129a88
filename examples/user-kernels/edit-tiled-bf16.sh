#!/usr/bin/env bash
# An edit of tiled_gemm.cu for the edit loop (docs/user-kernels.md, "Versions"): its shared-memory
# tiles hold bf16, as the inputs are, instead of float (half the shared memory, a conversion per
# product instead of per load). Prints the edited source.
#   examples/user-kernels/edit-tiled-bf16.sh tiled_gemm.cu > tiled_gemm_v2.cu
set -euo pipefail
sed -e 's/__shared__ float As/__shared__ __nv_bfloat16 As/' \
  -e 's/__shared__ float Bs/__shared__ __nv_bfloat16 Bs/' \
  -e 's/? __bfloat162float(A\[row \* K + ak\]) : 0.f;/? A[row * K + ak] : __float2bfloat16(0.f);/' \
  -e 's/? __bfloat162float(B\[bk \* N + col\]) : 0.f;/? B[bk * N + col] : __float2bfloat16(0.f);/' \
  -e 's/acc += As\[threadIdx.y\]\[k\] \* Bs\[k\]\[threadIdx.x\];/acc += __bfloat162float(As[threadIdx.y][k]) * __bfloat162float(Bs[k][threadIdx.x]);/' \
  "${1:?usage: edit-tiled-bf16.sh tiled_gemm.cu}"
