// Standalone timing of kernel variants of every family (not a test; the daemon's measurements are
// the reference): random inputs, 3 warm-up launches, CUDA events around each sample, L2 flushed
// before every sample by writing a 120 MB buffer, median of the samples.
// Usage: kernels_timing [M N K] [dtype] [name-prefix] [samples]
//   e.g. kernels_timing 4096 4096 4096 bf16 abl_ 25      (the defaults: bf16, abl_, 25)
//        kernels_timing 2048 2048 2048 fp32 simt_ 20
//        kernels_timing 4096 4096 4096 int8 pipe_ 20
// Times cublas_<dtype> first (cublas_int8 runs through cuBLASLt: the tool owns a cuBLASLt handle
// and workspace), then every variant whose name starts with the prefix and that runs the dtype.
// Prints one row per variant: name, median ms, TFLOPS (TOPS for int8), share of cublas_<dtype>,
// speed-up over the pipe_baseline_ variant of the same tile (pipe_ variants, "-" otherwise),
// registers, local memory (spills) and dynamic shared memory of the kernel; and, for variants
// whose work model counts them (smem2reg_*), GB/s moved shared memory -> registers and
// G fragment loads per second.
#include <cublasLt.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "kernels/testing/gpu_util.h"

using namespace ablation::kernels;

namespace {

struct Handles {
  cublasHandle_t cublas = nullptr;
  cublasLtHandle_t cublaslt = nullptr;
  DeviceBuffer workspace;
};

double MedianMs(const Variant& v, const testing::GemmBuffers& buf, Handles& h, void* flush,
                size_t flush_bytes, int samples, std::string* error) {
  GemmArgs args = buf.Args(v, h.cublas);
  args.cublaslt = h.cublaslt;
  args.workspace = h.workspace.data();
  args.workspace_bytes = h.workspace.bytes();
  return testing::MedianEventMs([&] { return v.launch(args); }, flush, flush_bytes, samples, error);
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
  const int samples = argc >= 7 ? std::max(1, std::atoi(argv[6])) : 25;
  if (std::string why = testing::NoDeviceReason(); !why.empty()) {
    std::fprintf(stderr, "%s\n", why.c_str());
    return 1;
  }
  Registry registry;
  RegisterCatalog(registry);
  BindLaunchers(registry);
  Handles h;
  cublasCreate(&h.cublas);
  cublasLtCreate(&h.cublaslt);  // cublas_int8 runs through cuBLASLt
  h.workspace.Allocate(32u << 20);
  testing::GemmBuffers buf;
  if (std::string e = buf.Init(p, 1234); !e.empty()) {
    std::fprintf(stderr, "inputs: %s\n", e.c_str());
    return 1;
  }
  const size_t flush_bytes = 120u << 20;
  DeviceBuffer flush;
  flush.Allocate(flush_bytes);

  const std::string dtype = std::string(ToString(p.dtype));
  const char* unit = p.dtype == DType::kINT8 ? "TOPS" : "TFLOPS";
  std::printf("# %lldx%lldx%lld %s, %d samples, L2 flushed, median\n", (long long)p.m,
              (long long)p.n, (long long)p.k, dtype.c_str(), samples);
  std::printf("%-30s %9s %9s %8s %7s %5s %6s %7s %9s %9s\n", "variant", "ms", unit, "cuBLAS%",
              "vs_base", "regs", "local", "smem", "GB/s", "Gloads/s");

  // The reference: cublas_<dtype>. Without it (missing, or it failed) the share reads "-".
  const std::string cublas_name = "cublas_" + dtype;
  std::string error;
  double base_ms = -1;
  if (const Variant* base = registry.Find(cublas_name); base == nullptr) {
    std::printf("%-30s missing from the catalog\n", cublas_name.c_str());
  } else if (base->launch == nullptr) {
    std::printf("%-30s error: no launcher bound\n", cublas_name.c_str());
  } else if (std::string why = base->can_implement(p); !why.empty()) {
    std::printf("%-30s refused: %s\n", cublas_name.c_str(), why.c_str());
  } else {
    base_ms = MedianMs(*base, buf, h, flush.data(), flush_bytes, samples, &error);
    if (base_ms < 0) {
      std::printf("%-30s error: %s\n", cublas_name.c_str(), error.c_str());
    } else {
      std::printf("%-30s %9.4f %9.1f %8.1f %7s %5s %6s %7s\n", cublas_name.c_str(), base_ms,
                  p.Flops() / (base_ms * 1e-3) / 1e12, 100.0, "-", "-", "-", "-");
    }
  }
  std::fflush(stdout);

  std::map<std::string, double> baseline_ms;  // pipe_: tile -> ms of its baseline pipeline
  for (const Variant& v : registry.All()) {
    if (v.name.rfind(prefix, 0) != 0 || !v.Supports(p.dtype) || v.family == "cublas") continue;
    if (v.launch == nullptr) {
      std::printf("%-30s error: no launcher bound\n", v.name.c_str());
      continue;
    }
    if (std::string why = v.can_implement(p); !why.empty()) {
      std::printf("%-30s refused: %s\n", v.name.c_str(), why.c_str());
      continue;
    }
    error.clear();
    const double ms = MedianMs(v, buf, h, flush.data(), flush_bytes, samples, &error);
    if (ms < 0) {
      std::printf("%-30s error: %s\n", v.name.c_str(), error.c_str());
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
    std::string vs_base = "-";
    if (v.family == "pipe") {
      const std::string tile = std::to_string(v.tile.m) + "x" + std::to_string(v.tile.n) + "x" +
                               std::to_string(v.tile.k);
      if (v.name.rfind("pipe_baseline_", 0) == 0) baseline_ms[tile] = ms;
      if (auto it = baseline_ms.find(tile); it != baseline_ms.end()) {
        char text[32];
        std::snprintf(text, sizeof text, "%.2f", it->second / ms);
        vs_base = text;
      }
    }
    char share_text[32] = "-";
    if (base_ms > 0) std::snprintf(share_text, sizeof share_text, "%.1f", 100.0 * base_ms / ms);
    const WorkModel w = v.Work(p);
    const double s = ms * 1e-3;
    std::printf("%-30s %9.4f %9.1f %8s %7s %5d %6ld %7lld %9.1f %9.2f\n", v.name.c_str(), ms,
                w.flops / s / 1e12, share_text, vs_base.c_str(), regs, local,
                (long long)v.smem_bytes, w.bytes / s / 1e9, w.fragment_loads / s / 1e9);
    std::fflush(stdout);
  }
  cublasLtDestroy(h.cublaslt);
  cublasDestroy(h.cublas);
  return 0;
}
