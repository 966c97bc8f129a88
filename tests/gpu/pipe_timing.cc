// Standalone timing of the pipe_ variants (not a test; the daemon's measurements are the
// reference): random inputs, 3 warm-up launches, CUDA events around each sample, L2 flushed before
// every sample by writing a 120 MB buffer, median of the samples.
// Usage: pipe_timing [M N K] [samples] [dtype...]     e.g. pipe_timing 4096 4096 4096 20 fp16 int8
// Prints per variant: median ms, TFLOPS (TOPS for int8), speed-up over the baseline pipeline of
// the same type and tile, registers, local memory and dynamic shared memory; and any cuBLAS entry
// of the catalog that runs the type, for scale.
#include <cublasLt.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "tests/gpu/kernels_gpu_util.h"

using namespace ablation::kernels;

namespace {

double MedianMs(const Variant& v, const GemmArgs& args, void* flush, size_t flush_bytes,
                int samples, std::string* error) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int i = 0; i < 3; ++i) {
    if (std::string e = v.launch(args); !e.empty()) {
      *error = e;
      return -1;
    }
  }
  std::vector<float> ms;
  for (int i = 0; i < samples; ++i) {
    cudaMemsetAsync(flush, i & 0xFF, flush_bytes);
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
  Problem p{4096, 4096, 4096, DType::kFP16};
  int arg = 1;
  if (argc >= 4) {
    p.m = std::atoll(argv[1]);
    p.n = std::atoll(argv[2]);
    p.k = std::atoll(argv[3]);
    arg = 4;
  }
  const int samples = argc > arg ? std::max(1, std::atoi(argv[arg++])) : 20;
  std::vector<DType> types;
  for (; arg < argc; ++arg) {
    auto d = ParseDType(argv[arg]);
    if (!d) {
      std::fprintf(stderr, "unknown dtype %s\n", argv[arg]);
      return 2;
    }
    types.push_back(*d);
  }
  if (types.empty()) types = {DType::kFP16, DType::kINT8, DType::kFP32};
  if (std::string why = testing::NoDeviceReason(); !why.empty()) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 1;
  }
  Registry registry;
  RegisterCatalog(registry);
  BindLaunchers(registry);
  cublasHandle_t cublas;
  cublasCreate(&cublas);
  cublasLtHandle_t cublaslt;  // cublas_int8 runs through cuBLASLt
  cublasLtCreate(&cublaslt);
  DeviceBuffer workspace;
  workspace.Allocate(32u << 20);
  const size_t flush_bytes = 120u << 20;
  DeviceBuffer flush;
  flush.Allocate(flush_bytes);

  for (DType dtype : types) {
    p.dtype = dtype;
    testing::GemmBuffers buf;
    if (std::string e = buf.Init(p, 1234); !e.empty()) {
      std::fprintf(stderr, "inputs: %s\n", e.c_str());
      return 1;
    }
    const char* unit = dtype == DType::kINT8 ? "TOPS" : "TFLOPS";
    std::printf("# %lldx%lldx%lld %s, %d samples, L2 flushed, median\n", (long long)p.m,
                (long long)p.n, (long long)p.k, std::string(ToString(dtype)).c_str(), samples);
    std::printf("%-30s %9s %9s %9s %5s %6s %7s\n", "variant", "ms", unit, "vs_base", "regs",
                "local", "smem");
    std::map<std::string, double> baseline_ms;  // tile -> ms of its baseline pipeline
    for (const Variant& v : registry.All()) {
      const bool pipe = v.family == "pipe";
      if ((!pipe && v.family != "cublas") || !v.Supports(dtype) || v.launch == nullptr) continue;
      if (std::string why = v.can_implement(p); !why.empty()) {
        std::printf("%-30s refused: %s\n", v.name.c_str(), why.c_str());
        continue;
      }
      std::string error;
      GemmArgs args = buf.Args(v, cublas);
      args.cublaslt = cublaslt;
      args.workspace = workspace.data();
      args.workspace_bytes = workspace.bytes();
      const double ms = MedianMs(v, args, flush.data(), flush_bytes, samples, &error);
      if (ms < 0) {
        std::printf("%-30s error: %s\n", v.name.c_str(), error.c_str());
        continue;
      }
      int regs = -1;
      long local = -1;
      cudaFuncAttributes attr{};
      if (v.kernel && v.kernel(dtype) &&
          cudaFuncGetAttributes(&attr, v.kernel(dtype)) == cudaSuccess) {
        regs = attr.numRegs;
        local = long(attr.localSizeBytes);
      }
      const std::string tile = std::to_string(v.tile.m) + "x" + std::to_string(v.tile.n) + "x" +
                               std::to_string(v.tile.k);
      if (pipe && v.name.rfind("pipe_baseline_", 0) == 0) baseline_ms[tile] = ms;
      const double speedup = pipe && baseline_ms.count(tile) ? baseline_ms[tile] / ms : 0.0;
      std::printf("%-30s %9.4f %9.1f %9.2f %5d %6ld %7lld\n", v.name.c_str(), ms,
                  p.Flops() / (ms * 1e-3) / 1e12, speedup, regs, local, (long long)v.smem_bytes);
      std::fflush(stdout);
    }
  }
  cublasLtDestroy(cublaslt);
  cublasDestroy(cublas);
  return 0;
}
