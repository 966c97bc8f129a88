// Tuning tool of the sm90 family (not a test; the daemon's measurements are the reference): times
// the rungs and configurations that are not rungs (kConfigs: each a rung's knobs with one change,
// such as other mma.sync tiles, 2x2 clusters, stream-K on every shape, other tile groups), to
// choose the rungs from measurement. Random inputs, 3 warm-up launches, CUDA events around each
// sample, L2 flushed before every sample (a 256 MB write), median; cuBLAS bf16 in the same run.
// Usage: sm90_tune [M N K] [samples] [only: entries whose name contains this, and cuBLAS] [fp8]
// (the 64x64 tile build and its configurations at 128 rows: sm90_tune 128 4096 4096 50 T64n)
// (fp8: the fp8 ladder, its configurations and cublas_fp8; an empty `only` takes every entry)
// --windows W [--sets S]: instead, W windows of `samples` samples each of the entries `only` names
// and cuBLAS, one after another, window w on input set w % S (S copies of A, B, B^T and C, each
// allocated on its own, filled alike: 2 by default, as the daemon rotates two sets at
// 16x4096x14336); a line per window and entry with its median, its 10th and 90th percentiles, and
// the set's addresses, then each entry's medians per set sorted: whether a build's slow windows
// follow the set (where its buffers lie), or come with the same buffers (something the launch sets
// up) (sm90_tune 16 4096 14336 50 n8_swapped --windows 40)
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/reference.h"
#include "kernels/sm90/sm90_mma_launch.cuh"
#include "kernels/sm90/sm90_tile_rungs.h"
#include "kernels/sm90/sm90_wgmma_launch.cuh"
#include "kernels/testing/gpu_util.h"

using namespace ablation::kernels;

namespace {

using Launch = ablation::kernels::LaunchFn;
using sm90::Knobs;
using sm90::With;
namespace rung = sm90::rung_knobs;

/// True when `k` is no rung's knobs (a configuration that only the tuning tool times).
consteval bool NotARung(const Knobs& k) {
  for (const sm90::Rung& r : sm90::kRungs) {
    if (r.knobs == k) return false;
  }
  for (const sm90::Rung& r : sm90::kFp8Rungs) {
    if (r.knobs == k) return false;
  }
  return true;
}

/// The 128x128 mma.sync tile: one change of four fields (the warp layout for the tile, three
/// stages and the two CTAs per SM that then fit).
constexpr auto kTile128 = [](Knobs& k) {
  k.warps_n = 2;
  k.block_n = 128;
  k.stages = 3;
  k.min_blocks = 2;
};

/// A configuration that is not a rung: a rung's knobs with one change.
struct Config {
  std::string_view name;
  Knobs knobs;
};

constexpr Config kConfigs[] = {
    {"M1 with 3 stages", With(rung::kM1, [](Knobs& k) { k.stages = 3; })},
    {"M1 as 128x128, 3 stages, 2 CTAs/SM", With(rung::kM1, kTile128)},
    {"H1 as 128x128, 3 stages, 2 CTAs/SM", With(rung::kH1, kTile128)},
    {"H8 with 2x2 clusters", With(rung::kH8, [](Knobs& k) { k.cluster_n = 2; })},
    {"H8 + epilogue overlapped with the next tile",
     With(rung::kH8, [](Knobs& k) { k.overlap_epilogue = true; })},
    {"H9 with stream-K whatever the last round",
     With(rung::kH9, [](Knobs& k) { k.sk_max_full_quarters = 4; })},
    {"H9 with 2x2 clusters (A multicast too)", With(rung::kH9, [](Knobs& k) { k.cluster_n = 2; })},
    {"H10 with stream-K whatever the last round",
     With(rung::kH10, [](Knobs& k) { k.sk_max_full_quarters = 4; })},
    {"H10 with groups of 4 unit rows", With(rung::kH10, [](Knobs& k) { k.group_rows = 4; })},
    {"H10 with groups of 16 unit rows", With(rung::kH10, [](Knobs& k) { k.group_rows = 16; })},
    {"H10 with groups of 2 unit rows", With(rung::kH10, [](Knobs& k) { k.group_rows = 2; })},
    {"H10 on 128 CTAs (64 clusters)", With(rung::kH10, [](Knobs& k) { k.max_ctas = 128; })},
    {"H10 with row order", With(rung::kH10, [](Knobs& k) { k.grouped_order = false; })},
    {"H10 with 2x2 clusters (A multicast too)",
     With(rung::kH10, [](Knobs& k) { k.cluster_n = 2; })},
    {"H10 without clusters (no B multicast)", With(rung::kH10, [](Knobs& k) { k.cluster_m = 1; })},
    {"H11 with groups of 4 unit rows", With(rung::kH11, [](Knobs& k) { k.group_rows = 4; })},
    {"H11 with groups of 16 unit rows", With(rung::kH11, [](Knobs& k) { k.group_rows = 16; })},
    {"H11 without clusters (no B multicast)", With(rung::kH11, [](Knobs& k) { k.cluster_m = 1; })},
    // 4096^3's barrier stalls: the epilogue's stores per warp, no named barriers (warp_stores).
    {"H12 with per-warp TMA stores", With(rung::kH12, [](Knobs& k) { k.warp_stores = true; })},
    // The 64x64 tile build (kTileRungs, for 128 rows): how deep its pipeline needs to be (T64nU,
    // a tile build, is it without clusters).
    {"T64n with 6 stages", With(rung::kT64N64, [](Knobs& k) { k.stages = 6; })},
    {"T64n with 9 stages", With(rung::kT64N64, [](Knobs& k) { k.stages = 9; })},
};

/// The fp8 ladder's configurations (dtype fp8): F7's knobs with one change each (2x1 clusters:
/// the bf16 ladder's H5, which the fp8 ladder leaves out for what it measured here).
constexpr Config kFp8Configs[] = {
    {"F7 with 2x1 clusters (B multicast)", With(rung::kF7, [](Knobs& k) { k.cluster_m = 2; })},
    {"F7 on 128 CTAs", With(rung::kF7, [](Knobs& k) { k.max_ctas = 128; })},
    {"F7 with stream-K whatever the last round",
     With(rung::kF7, [](Knobs& k) { k.sk_max_full_quarters = 4; })},
    {"F7 with groups of 4 tile rows", With(rung::kF7, [](Knobs& k) { k.group_rows = 4; })},
    {"F7 with groups of 16 tile rows", With(rung::kF7, [](Knobs& k) { k.group_rows = 16; })},
    {"F7 with no batch left running (pending 0)", With(rung::kF7, [](Knobs& k) { k.pending = 0; })},
    {"F8 with groups of 16 tile rows", With(rung::kF8, [](Knobs& k) { k.group_rows = 16; })},
    {"F8 with groups of 4 tile rows", With(rung::kF8, [](Knobs& k) { k.group_rows = 4; })},
};

/// No configuration is a rung (the rungs are timed through the registry) or another one.
consteval bool AllDistinct() {
  for (size_t i = 0; i < std::size(kConfigs); ++i) {
    if (!NotARung(kConfigs[i].knobs)) return false;
    for (size_t j = 0; j < i; ++j) {
      if (kConfigs[i].knobs == kConfigs[j].knobs) return false;
    }
  }
  return true;
}
static_assert(AllDistinct(), "a tuning configuration repeats a rung or another configuration");

consteval bool AllFp8Distinct() {
  for (size_t i = 0; i < std::size(kFp8Configs); ++i) {
    if (!NotARung(kFp8Configs[i].knobs) || !kFp8Configs[i].knobs.fp8) return false;
    for (size_t j = 0; j < i; ++j) {
      if (kFp8Configs[i].knobs == kFp8Configs[j].knobs) return false;
    }
  }
  return true;
}
static_assert(AllFp8Distinct(), "an fp8 configuration repeats a rung or another configuration");

struct Entry {
  std::string name;
  Launch launch;
  bool nk;  ///< B given N x K (the sm90 family), not K x N (cuBLAS's reference run)
};

/// The launcher of knobs K: the wgmma kernel's or the mma.sync kernel's.
template <Knobs K>
Launch LauncherOf() {
  if constexpr (K.mainloop == sm90::Mainloop::kWgmma) {
    return &sm90::LaunchRung<sm90::WgmmaBuild, K, false>;
  } else {
    return &sm90::LaunchRung<sm90::MmaBuild, K, false>;
  }
}

/// An entry per configuration of kTable (kConfigs or kFp8Configs), in its order.
template <const auto& kTable>
std::vector<Entry> ConfigEntries() {
  return []<size_t... I>(std::index_sequence<I...>) {
    return std::vector<Entry>{
        {std::string(kTable[I].name), LauncherOf<kTable[I].knobs>(), true}...};
  }
  (std::make_index_sequence<std::size(kTable)>{});
}

/// One window of the --windows mode: `entry`'s samples on `set`, a line with their median, 10th
/// and 90th percentiles and the set's addresses; its median in ms (-1: failed, line says why).
double TimeWindow(int window, int set_index, const Entry& e, const testing::GemmBuffers& set,
                  const GemmArgs& base, void* flush, size_t flush_bytes, int samples,
                  double flops) {
  GemmArgs args = base;
  args.a = set.a.data();
  args.b = e.nk ? set.b_nk.data() : set.b_kn.data();
  args.c = set.c.data();
  std::string error;
  const std::vector<float> ms =
      testing::EventSamplesMs([&] { return e.launch(args); }, flush, flush_bytes, samples, &error);
  if (!error.empty() || ms.empty()) {
    std::printf("window %3d set %d %-40s error: %s\n", window, set_index, e.name.c_str(),
                error.c_str());
    return -1;
  }
  const double median = ms[ms.size() / 2], p10 = ms[ms.size() / 10], p90 = ms[ms.size() * 9 / 10];
  std::printf(
      "window %3d set %d %-40s %8.4f ms %7.1f TFLOPS  p10 %8.4f p90 %8.4f  A %p B %p C %p\n",
      window, set_index, e.name.c_str(), median, flops / (median * 1e-3) / 1e12, p10, p90, args.a,
      args.b, args.c);
  return median;
}

/// The --windows mode (see the usage above); its exit status.
int TimeWindows(const std::vector<Entry>& entries, const Problem& problem, int windows, int sets,
                int samples, const GemmArgs& base, void* flush, size_t flush_bytes) {
  std::vector<testing::GemmBuffers> buffers(static_cast<size_t>(sets));
  for (int s = 0; s < sets; ++s) {
    // The same seed: every set holds the same values, only where they lie differs.
    if (std::string e = buffers[size_t(s)].Init(problem, 5); !e.empty()) {
      std::printf("input set %d: %s\n", s, e.c_str());
      return 1;
    }
  }
  const double flops = 2.0 * double(problem.m) * double(problem.n) * double(problem.k);
  // medians[entry][set]: each window's median, in window order.
  std::vector<std::vector<std::vector<double>>> medians(
      entries.size(), std::vector<std::vector<double>>(size_t(sets)));
  for (int w = 0; w < windows; ++w) {
    const int s = w % sets;
    for (size_t i = 0; i < entries.size(); ++i) {
      const double ms = TimeWindow(w, s, entries[i], buffers[size_t(s)], base, flush, flush_bytes,
                                   samples, flops);
      if (ms > 0) medians[i][size_t(s)].push_back(ms);
    }
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    for (int s = 0; s < sets; ++s) {
      std::vector<double> m = medians[i][size_t(s)];
      std::sort(m.begin(), m.end());
      std::printf("%-40s set %d, TFLOPS of its %zu windows, fastest first:",
                  entries[i].name.c_str(), s, m.size());
      for (double ms : m) std::printf(" %.1f", flops / (ms * 1e-3) / 1e12);
      std::printf("\n");
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // --windows W and --sets S anywhere; the rest positional, as before.
  int windows = 0, sets = 2;
  std::vector<char*> positional = {argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if ((arg == "--windows" || arg == "--sets") && i + 1 < argc) {
      (arg == "--windows" ? windows : sets) = atoi(argv[++i]);
    } else {
      positional.push_back(argv[i]);
    }
  }
  if (windows < 0 || sets < 1) {
    std::printf("--windows takes a count of 0 or more, --sets one of 1 or more\n");
    return 2;
  }
  argc = int(positional.size());
  argv = positional.data();
  const int64_t m = argc > 3 ? atoll(argv[1]) : 4096, n = argc > 3 ? atoll(argv[2]) : 4096,
                k = argc > 3 ? atoll(argv[3]) : 4096;
  const int samples = argc > 4 ? atoi(argv[4]) : 20;
  const std::string only = argc > 5 ? argv[5] : "";
  // bf16 (the default) or fp8: the fp8 ladder, its configurations and cuBLASLt's fp8 GEMM.
  const DType dtype = argc > 6 && std::string_view(argv[6]) == "fp8" ? DType::kFP8 : DType::kBF16;
  const bool fp8 = dtype == DType::kFP8;
  const std::string reference_name = fp8 ? "cublas_fp8" : "cublas_bf16";
  setvbuf(stdout, nullptr, _IOLBF, 0);  // each line out before the next launch
  if (std::string why = testing::NoDeviceReason(); !why.empty()) {
    std::printf("skipped: %s\n", why.c_str());
    return 0;
  }
  Registry registry;
  RegisterCatalog(registry);
  BindLaunchers(registry);
  testing::GemmBuffers buf;
  if (std::string e = buf.Init({m, n, k, dtype}, 5); !e.empty()) {
    std::printf("inputs: %s\n", e.c_str());
    return 1;
  }
  DeviceBuffer flush;
  const size_t flush_bytes = size_t(256) << 20;
  if (std::string e = flush.Allocate(flush_bytes); !e.empty()) return 1;
  cublasHandle_t cublas;
  cublasCreate(&cublas);
  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  DeviceBuffer workspace;
  if (std::string e = workspace.Allocate(size_t(32) << 20); !e.empty()) return 1;
  const float *scale_a = nullptr, *scale_b = nullptr;
  if (fp8) {
    if (std::string e = Fp8ScalePointers(&scale_a, &scale_b); !e.empty()) {
      std::printf("fp8 scales: %s\n", e.c_str());
      return 1;
    }
  }
  const double flops = 2.0 * double(m) * double(n) * double(k);
  std::printf("# %lldx%lldx%lld %s, %d samples, L2 flushed, median\n", (long long)m, (long long)n,
              (long long)k, std::string(ToString(dtype)).c_str(), samples);
  double cublas_tflops = 0;
  const Variant* cb = registry.Find(reference_name);
  // The ladder's rungs through their registry launchers, then configurations that are not rungs.
  // cuBLASLt's fp8 takes B as N x K.
  std::vector<Entry> entries = {{reference_name, cb->launch, fp8}};
  for (const sm90::Rung& r : fp8 ? std::span<const sm90::Rung>(sm90::kFp8Rungs)
                                 : std::span<const sm90::Rung>(sm90::kRungs)) {
    entries.push_back(
        {std::string(r.id) + " " + std::string(r.name), registry.Find(r.name)->launch, true});
  }
  // bf16: the builds with a smaller block tile too (the swapped ones swap in their launcher).
  for (const sm90::Rung& r : fp8 ? std::span<const sm90::Rung>() : std::span(sm90::kTileRungs)) {
    entries.push_back(
        {std::string(r.id) + " " + std::string(r.name), registry.Find(r.name)->launch, true});
  }
  const std::vector<Entry> others = fp8 ? ConfigEntries<kFp8Configs>() : ConfigEntries<kConfigs>();
  entries.insert(entries.end(), others.begin(), others.end());
  GemmArgs base;  // every launch's but its operands
  base.problem = buf.problem;
  base.cublas = cublas;
  base.cublaslt = lt;
  base.workspace = workspace.data();
  base.workspace_bytes = workspace.bytes();
  base.scale_a = scale_a;
  base.scale_b = scale_b;
  if (windows > 0) {
    std::vector<Entry> chosen;
    for (const Entry& e : entries) {
      if (e.name == reference_name || (!only.empty() && e.name.find(only) != std::string::npos))
        chosen.push_back(e);
    }
    std::printf("# %d windows over %d input sets\n", windows, sets);
    const int status =
        TimeWindows(chosen, buf.problem, windows, sets, samples, base, flush.data(), flush_bytes);
    cublasDestroy(cublas);
    cublasLtDestroy(lt);
    return status;
  }
  std::vector<double> reference;
  for (const Entry& e : entries) {
    if (!only.empty() && e.name != reference_name && e.name.find(only) == std::string::npos)
      continue;
    GemmArgs args = base;
    args.a = buf.a.data();
    args.b = e.nk ? buf.b_nk.data() : buf.b_kn.data();
    args.c = buf.c.data();
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
    if (std::string ce = CopyToHostAsDouble(buf.c.data(), size_t(m * n), dtype, true, &out);
        !ce.empty()) {
      std::printf("%-48s error: %s\n", e.name.c_str(), ce.c_str());
      continue;
    }
    std::string check = "reference";
    if (reference.empty()) {
      reference = std::move(out);
    } else {
      const Comparison cmp = Compare(out, reference, dtype, DefaultTolerance(dtype));
      check =
          cmp.passed ? "matches cuBLAS" : "MISMATCH rel " + std::to_string(cmp.rel_frobenius_error);
    }
    std::printf("%-48s %8.4f ms %7.1f TFLOPS %6.1f%% of cuBLAS  %s\n", e.name.c_str(), ms, tflops,
                100.0 * tflops / cublas_tflops, check.c_str());
  }
  cublasDestroy(cublas);
  cublasLtDestroy(lt);
  return 0;
}
