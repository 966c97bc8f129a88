// Standalone timing of kernel variants (not a test): random inputs, warm-up, CUDA events around
// each sample, L2 flushed before every sample by writing a 120 MB buffer, median of the samples.
// Usage: kernels_timing [M N K] [dtype] [name-prefix] [samples]
//   e.g. kernels_timing 4096 4096 4096 bf16 abl_ 25
// Prints one row per variant: name, median ms, TFLOPS, share of the cuBLAS entry of that dtype,
// registers and local memory (spills) of the kernel; and, for variants whose work model counts
// them (smem2reg_*), GB/s moved shared memory -> registers and G fragment loads per second.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/gpu/kernels_gpu_util.h"

using namespace ablation::kernels;

namespace {

double MedianMs(const Variant& v, const testing::GemmBuffers& buf, void* cublas, void* flush,
                size_t flush_bytes, int samples, std::string* error) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  const GemmArgs args = buf.Args(v, cublas);
  for (int i = 0; i < 3; ++i) {  // warm-up (also the one-time smem opt-in)
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
  Problem p{4096, 4096, 4096, DType::kBF16};
  if (argc >= 4) {
    p.m = std::atoll(argv[1]);
    p.n = std::atoll(argv[2]);
    p.k = std::atoll(argv[3]);
  }
  if (argc >= 5) {
    auto d = ParseDType(argv[4]);
    if (!d) {
      std::fprintf(stderr, "unknown dtype %s\n", argv[4]);
      return 2;
    }
    p.dtype = *d;
  }
  const std::string prefix = argc >= 6 ? argv[5] : "abl_";
  const int samples = argc >= 7 ? std::atoi(argv[6]) : 25;
  if (std::string why = testing::NoDeviceReason(); !why.empty()) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 1;
  }
  Registry registry;
  RegisterCatalog(registry);
  BindLaunchers(registry);
  cublasHandle_t cublas;
  cublasCreate(&cublas);
  testing::GemmBuffers buf;
  if (std::string e = buf.Init(p, 1234); !e.empty()) {
    std::fprintf(stderr, "inputs: %s\n", e.c_str());
    return 1;
  }
  const size_t flush_bytes = 120u << 20;
  DeviceBuffer flush;
  flush.Allocate(flush_bytes);

  const std::string cublas_name = p.dtype == DType::kFP16 ? "cublas_fp16" : "cublas_bf16";
  std::string error;
  const Variant* base = registry.Find(cublas_name);
  const double base_ms = MedianMs(*base, buf, cublas, flush.data(), flush_bytes, samples, &error);
  const double tf = [&](double ms) { return p.Flops() / (ms * 1e-3) / 1e12; }(base_ms);
  std::printf("# %lldx%lldx%lld %s, %d samples, L2 flushed, median\n", (long long)p.m,
              (long long)p.n, (long long)p.k, std::string(ToString(p.dtype)).c_str(), samples);
  std::printf("%-28s %9s %9s %8s %5s %6s %9s %9s\n", "variant", "ms", "TFLOPS", "cuBLAS%", "regs",
              "local", "GB/s", "Gloads/s");
  std::printf("%-28s %9.4f %9.1f %8.1f %5s %6s\n", cublas_name.c_str(), base_ms, tf, 100.0, "-",
              "-");
  for (const Variant& v : registry.All()) {
    if (v.name.rfind(prefix, 0) != 0 || !v.Supports(p.dtype) || v.family == "cublas") continue;
    if (std::string why = v.can_implement(p); !why.empty()) {
      std::printf("%-28s refused: %s\n", v.name.c_str(), why.c_str());
      continue;
    }
    error.clear();
    const double ms = MedianMs(v, buf, cublas, flush.data(), flush_bytes, samples, &error);
    if (ms < 0) {
      std::printf("%-28s error: %s\n", v.name.c_str(), error.c_str());
      continue;
    }
    cudaFuncAttributes attr{};
    int regs = -1;
    long local = -1;
    if (v.kernel && v.kernel(p.dtype) &&
        cudaFuncGetAttributes(&attr, v.kernel(p.dtype)) == cudaSuccess) {
      regs = attr.numRegs;
      local = long(attr.localSizeBytes);
    }
    const WorkModel w = v.Work(p);
    const double s = ms * 1e-3;
    std::printf("%-28s %9.4f %9.1f %8.1f %5d %6ld %9.1f %9.2f\n", v.name.c_str(), ms,
                w.flops / s / 1e12, 100.0 * base_ms / ms, regs, local, w.bytes / s / 1e9,
                w.fragment_loads / s / 1e9);
    std::fflush(stdout);
  }
  cublasDestroy(cublas);
  return 0;
}
