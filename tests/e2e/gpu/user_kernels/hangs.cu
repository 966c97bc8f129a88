// A planted hang for the GPU end-to-end test: the kernel spins until a __device__ word becomes
// non-zero, which nothing ever writes. The word is read through a volatile pointer, so every
// iteration loads it from global memory again and the compiler can neither hoist the read nor
// remove the loop: the launch never ends, and the service's deadline must stop it. The store after
// the loop (never reached) gives the kernel an effect on C.
#include <cuda_bf16.h>

__device__ int g_never_written;  // zero at module load; no code writes it

extern "C" __global__ void hangs(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,
                                 int M, int N, int K) {
  const volatile int* flag = &g_never_written;
  while (*flag == 0) __nanosleep(1000);
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (long long)M * N) C[i] = __float2bfloat16(float(K));
}
