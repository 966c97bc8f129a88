// Standalone timing of the simt and tf32 families and of cublas_int8 (not a test): random inputs,
// warm-up, CUDA events around each sample, L2 flushed before every sample by writing a 120 MB
// buffer, median of the samples. Each variant is compared with the cuBLAS entry of its dtype.
// Usage: ladders_timing [M N K] [samples]
// Prints one row per variant: name, dtype, median ms, TFLOPS (TOPS for int8), share of
// cublas_<dtype>, registers and local memory (spills) of the kernel.
#include <cublasLt.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/gpu/kernels_gpu_util.h"

using namespace ablation::kernels;

namespace {

struct Handles {
  cublasHandle_t cublas = nullptr;
  cublasLtHandle_t cublaslt = nullptr;
  DeviceBuffer workspace;
};

double MedianMs(const Variant& v, const testing::GemmBuffers& buf, Handles& h, void* flush,
                size_t flush_bytes, int samples, std::string* error) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  GemmArgs args = buf.Args(v, h.cublas);
  args.cublaslt = h.cublaslt;
  args.workspace = h.workspace.data();
  args.workspace_bytes = h.workspace.bytes();
  for (int i = 0; i < 3; ++i) {  // warm-up (also cuBLASLt's plan)
    if (std::string e = v.launch(args); !e.empty()) {
      *error = e;
      return -1;
    }
  }
  std::vector<float> ms;
  for (int i = 0; i < samples; ++i) {
    cudaMemsetAsync(flush, i & 0xFF, flush_bytes);  // evicts A, B, C from the 60 MB L2
    cudaEventRecord(start);
    v.launch(args);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
    *error = cudaGetErrorString(e);
    return -1;
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int64_t m = 4096, n = 4096, k = 4096;
  if (argc >= 4) {
    m = std::atoll(argv[1]);
    n = std::atoll(argv[2]);
    k = std::atoll(argv[3]);
  }
  const int samples = argc >= 5 ? std::atoi(argv[4]) : 20;
  if (std::string why = testing::NoDeviceReason(); !why.empty()) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 1;
  }
  Registry registry;
  RegisterCatalog(registry);
  BindLaunchers(registry);
  Handles h;
  cublasCreate(&h.cublas);
  cublasLtCreate(&h.cublaslt);
  h.workspace.Allocate(32u << 20);
  const size_t flush_bytes = 120u << 20;
  DeviceBuffer flush;
  flush.Allocate(flush_bytes);

  std::printf("# %lldx%lldx%lld, %d samples, L2 flushed, median\n", (long long)m, (long long)n,
              (long long)k, samples);
  std::printf("%-26s %5s %9s %9s %8s %5s %6s\n", "variant", "dtype", "ms", "TFLOPS", "cuBLAS%",
              "regs", "local");
  for (DType dtype : {DType::kFP32, DType::kTF32, DType::kINT8}) {
    const Problem p{m, n, k, dtype};
    testing::GemmBuffers buf;
    if (std::string e = buf.Init(p, 1234); !e.empty()) {
      std::fprintf(stderr, "inputs: %s\n", e.c_str());
      return 1;
    }
    const std::string base_name = "cublas_" + std::string(ToString(dtype));
    std::string error;
    const double base_ms =
        MedianMs(*registry.Find(base_name), buf, h, flush.data(), flush_bytes, samples, &error);
    const auto tflops = [&](double ms) { return p.Flops() / (ms * 1e-3) / 1e12; };
    if (base_ms < 0) {
      std::printf("%-26s %5s error: %s\n", base_name.c_str(), std::string(ToString(dtype)).c_str(),
                  error.c_str());
      continue;
    }
    std::printf("%-26s %5s %9.4f %9.1f %8.1f %5s %6s\n", base_name.c_str(),
                std::string(ToString(dtype)).c_str(), base_ms, tflops(base_ms), 100.0, "-", "-");
    for (const Variant& v : registry.All()) {
      if ((v.family != "simt" && v.family != "tf32") || !v.Supports(dtype)) continue;
      if (std::string why = v.can_implement(p); !why.empty()) {
        std::printf("%-26s refused: %s\n", v.name.c_str(), why.c_str());
        continue;
      }
      error.clear();
      const double ms = MedianMs(v, buf, h, flush.data(), flush_bytes, samples, &error);
      if (ms < 0) {
        std::printf("%-26s error: %s\n", v.name.c_str(), error.c_str());
        continue;
      }
      cudaFuncAttributes attr{};
      int regs = -1;
      long local = -1;
      if (v.kernel && v.kernel(dtype) &&
          cudaFuncGetAttributes(&attr, v.kernel(dtype)) == cudaSuccess) {
        regs = attr.numRegs;
        local = long(attr.localSizeBytes);
      }
      std::printf("%-26s %5s %9.4f %9.1f %8.1f %5d %6ld\n", v.name.c_str(),
                  std::string(ToString(dtype)).c_str(), ms, tflops(ms), 100.0 * base_ms / ms, regs,
                  local);
      std::fflush(stdout);
    }
  }
  cublasLtDestroy(h.cublaslt);
  cublasDestroy(h.cublas);
  return 0;
}
