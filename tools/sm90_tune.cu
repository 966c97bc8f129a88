// Tuning tool of the sm90 family (not a test; the daemon's measurements are the reference): times
// the rungs and configurations that are not rungs (other mma.sync orders and tiles, stream-K on
// every shape), to choose the rungs from measurement. Random inputs, 3 warm-up launches, CUDA
// events around each sample, L2 flushed before every sample (a 256 MB write), median; cuBLAS bf16
// in the same run. Usage: sm90_tune [M N K] [samples] [only: entries whose name contains this, and
// cuBLAS]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kernels/reference.h"
#include "kernels/sm90/sm90_mma_launch.cuh"
#include "kernels/sm90/sm90_wgmma_launch.cuh"
#include "kernels/testing/gpu_util.h"

using namespace ablation::kernels;

namespace {

using Launch = ablation::kernels::LaunchFn;

template <class Cfg>
std::string Name(const char* what) {
  return std::string(what) + " warps " + std::to_string(Cfg::kWarpsM) + "x" +
         std::to_string(Cfg::kWarpsN) + " (warp tile " + std::to_string(Cfg::kWarpM) + "x" +
         std::to_string(Cfg::kWarpN) + ")";
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t m = argc > 3 ? atoll(argv[1]) : 4096, n = argc > 3 ? atoll(argv[2]) : 4096,
                k = argc > 3 ? atoll(argv[3]) : 4096;
  const int samples = argc > 4 ? atoi(argv[4]) : 20;
  const std::string only = argc > 5 ? argv[5] : "";
  setvbuf(stdout, nullptr, _IOLBF, 0);  // each line out before the next launch
  if (std::string why = testing::NoDeviceReason(); !why.empty()) {
    std::printf("skipped: %s\n", why.c_str());
    return 0;
  }
  Registry registry;
  RegisterCatalog(registry);
  BindLaunchers(registry);
  testing::GemmBuffers buf;
  if (std::string e = buf.Init({m, n, k, DType::kBF16}, 5); !e.empty()) {
    std::printf("inputs: %s\n", e.c_str());
    return 1;
  }
  DeviceBuffer flush;
  const size_t flush_bytes = size_t(256) << 20;
  if (std::string e = flush.Allocate(flush_bytes); !e.empty()) return 1;
  cublasHandle_t cublas;
  cublasCreate(&cublas);
  const double flops = 2.0 * double(m) * double(n) * double(k);
  std::printf("# %lldx%lldx%lld bf16, %d samples, L2 flushed, median\n", (long long)m, (long long)n,
              (long long)k, samples);
  double cublas_tflops = 0;
  struct Entry {
    std::string name;
    Launch launch;
    bool nk;
  };
  const Variant* cb = registry.Find("cublas_bf16");
  using sm90::MmaConfig;
  using sm90::WgmmaConfig;
  constexpr sm90::Epilogue kTma = sm90::Epilogue::kTmaStore;
  // The ladder's rungs through their registry launchers, then configurations that are not rungs.
  std::vector<Entry> entries = {{"cublas_bf16", cb->launch, false}};
  for (const sm90::Rung& r : sm90::kRungs) {
    entries.push_back(
        {std::string(r.id) + " " + std::string(r.name), registry.Find(r.name)->launch, true});
  }
  const std::vector<Entry> others = {
      {Name<MmaConfig<false, 2, 4>>("mma.sync cp.async, no cross-stage, 4B stores,"),
       &sm90::LaunchMma<MmaConfig<false, 2, 4>>, true},
      {"mma.sync cp.async + cross-stage, 4B stores", &sm90::LaunchMma<MmaConfig<false, 2, 4, true>>,
       true},
      {"M1 with 3 stages", &sm90::LaunchMma<MmaConfig<false, 2, 4, true, true, 256, 3, 1>>, true},
      {"M1 as 128x128, 3 stages, 2 CTAs/SM",
       &sm90::LaunchMma<MmaConfig<false, 2, 2, true, true, 128, 3, 2>>, true},
      {"H1 as 128x128, 3 stages, 2 CTAs/SM",
       &sm90::LaunchMma<MmaConfig<true, 2, 2, true, true, 128, 3, 2>>, true},
      {"H8 with stream-K whatever the last round",
       &sm90::LaunchWgmma<WgmmaConfig<true, true, 2, true, 1, kTma, true, 1, 4>>, true},
      {"H9 with 2x2 clusters (A multicast too)",
       &sm90::LaunchWgmma<WgmmaConfig<true, true, 2, true, 1, kTma, true, 2>>, true},
      {"H8 with 2x2 clusters",
       &sm90::LaunchWgmma<WgmmaConfig<true, true, 2, true, 1, kTma, false, 2>>, true},
      {"H9 + epilogue overlapped with the next tile",
       &sm90::LaunchWgmma<
           WgmmaConfig<true, true, 2, true, 1, kTma, true, 1, sm90::kStreamKMaxFullQuarters, true>>,
       true},
      {"H8 + epilogue overlapped with the next tile",
       &sm90::LaunchWgmma<WgmmaConfig<true, true, 2, true, 1, kTma, false, 1,
                                      sm90::kStreamKMaxFullQuarters, true>>,
       true},
      {"H9 overlapped, stream-K whatever the last round",
       &sm90::LaunchWgmma<WgmmaConfig<true, true, 2, true, 1, kTma, true, 1, 4, true>>, true},
      {"H10 with groups of 4 unit rows",
       &sm90::LaunchWgmma<WgmmaConfig<true, true, 2, true, 1, kTma, true, 1,
                                      sm90::kStreamKMaxFullQuarters, true, 4>>,
       true},
      {"H10 with groups of 16 unit rows",
       &sm90::LaunchWgmma<WgmmaConfig<true, true, 2, true, 1, kTma, true, 1,
                                      sm90::kStreamKMaxFullQuarters, true, 16>>,
       true},
      {"H10 with groups of 2 unit rows",
       &sm90::LaunchWgmma<WgmmaConfig<true, true, 2, true, 1, kTma, true, 1,
                                      sm90::kStreamKMaxFullQuarters, true, 2>>,
       true},
      {"H10 on 128 CTAs (64 clusters)",
       &sm90::LaunchWgmma<
           WgmmaConfig<true, true, 2, true, 1, kTma, true, 1, sm90::kStreamKMaxFullQuarters, true>,
           128>,
       true},
      {"H10 with row order",
       &sm90::LaunchWgmma<WgmmaConfig<true, true, 2, false, 1, kTma, true, 1,
                                      sm90::kStreamKMaxFullQuarters, true>>,
       true},
      {"H10 with 2x2 clusters (A multicast too)",
       &sm90::LaunchWgmma<
           WgmmaConfig<true, true, 2, true, 1, kTma, true, 2, sm90::kStreamKMaxFullQuarters, true>>,
       true},
  };
  entries.insert(entries.end(), others.begin(), others.end());
  std::vector<double> reference;
  for (const Entry& e : entries) {
    if (!only.empty() && e.name != "cublas_bf16" && e.name.find(only) == std::string::npos)
      continue;
    GemmArgs args;
    args.problem = buf.problem;
    args.a = buf.a.data();
    args.b = e.nk ? buf.b_nk.data() : buf.b_kn.data();
    args.c = buf.c.data();
    args.cublas = cublas;
    std::string error;
    const double ms = testing::MedianEventMs([&] { return e.launch(args); }, flush.data(),
                                             flush_bytes, samples, &error);
    if (!error.empty()) {
      std::printf("%-48s error: %s\n", e.name.c_str(), error.c_str());
      continue;
    }
    const double tflops = flops / (ms * 1e-3) / 1e12;
    if (cublas_tflops == 0) cublas_tflops = tflops;
    // The last sample's output against cuBLAS's (the first entry), bf16 tolerance.
    std::vector<double> out;
    if (std::string ce = CopyToHostAsDouble(buf.c.data(), size_t(m * n), DType::kBF16, true, &out);
        !ce.empty()) {
      std::printf("%-48s error: %s\n", e.name.c_str(), ce.c_str());
      continue;
    }
    std::string check = "reference";
    if (reference.empty()) {
      reference = std::move(out);
    } else {
      const Comparison cmp = Compare(out, reference, DType::kBF16, DefaultTolerance(DType::kBF16));
      check =
          cmp.passed ? "matches cuBLAS" : "MISMATCH rel " + std::to_string(cmp.rel_frobenius_error);
    }
    std::printf("%-48s %8.4f ms %7.1f TFLOPS %6.1f%% of cuBLAS  %s\n", e.name.c_str(), ms, tflops,
                100.0 * tflops / cublas_tflops, check.c_str());
  }
  cublasDestroy(cublas);
  return 0;
}
