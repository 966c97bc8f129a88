#include "kernels/sm90/sm90_catalog.h"

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/sm90/sm90_buckets.h"
#include "kernels/sm90/sm90_config.h"
#include "kernels/sm90/sm90_few_rows.h"
#include "kernels/sm90/sm90_plan.h"
#include "kernels/sm90/sm90_shapes.h"
#include "kernels/sm90/sm90_tile_rungs.h"

namespace ablation::kernels {
namespace {

using namespace sm90;

std::string Describe(const Rung& r) {
  std::string d = std::string(r.id) + ": " + std::string(r.adds) + ".";
  if (r.knobs.fp8) {
    d += " fp8: e4m3 in with per-tensor scales (C = scale_a * scale_b * A * B^T), fp32 "
         "accumulate, bf16 out; B is N x K; 128x256x128 tile, 4 stages, wgmma (QGMMA), TMA loads."
         " Runs on compute capability 9.0 only (sm_90a). Any M, N, K of at least 1, as the bf16 "
         "rungs (K not a multiple of 16 or N not of 8: padded copies inside the timed launch)."
         " Verified against the FP64 product of the dequantised inputs within the fp8 tolerance "
         "and against cublas_fp8";
    if (r.knobs.stream_k) d += ". Stream-K adds the partial sums in a fixed order";
    return d;
  }
  const std::string tile = std::to_string(r.knobs.block_m) + "x" + std::to_string(r.knobs.block_n) +
                           "x" + std::to_string(kBlockK);
  d += " bf16 in, fp32 accumulate, bf16 out; B is N x K; " + tile + " tile, " +
       std::to_string(r.knobs.stages) + " stages";
  d += r.knobs.mainloop == Mainloop::kWgmma ? ", wgmma (HGMMA)" : ", mma.sync (HMMA)";
  d += r.knobs.mainloop == Mainloop::kMmaCpAsync ? ", cp.async loads" : ", TMA loads";
  d += ". Runs on compute capability 9.0 only (sm_90a).";
  d += " Any M, N, K of at least 1: off the " + tile +
       " tile its bounds-checked build runs (loads "
       "past the matrices read zeros, stores past them are skipped); where K or N is not a "
       "multiple of 8 (rows that are not whole 16-byte chunks, which TMA cannot address) the "
       "operands are first copied into padded rows and C copied back, inside the timed launch.";
  d += " Verified against cuBLAS within the bf16 tolerance; not bit-identical to the abl_ family";
  if (r.knobs.mainloop == Mainloop::kWgmma)
    d += " (wgmma accumulates in another order than mma.sync)";
  if (r.knobs.stream_k) {
    d += ". Stream-K adds the partial sums in a fixed order, so a result repeats bit for bit; the "
         "partials take 512 KiB of device memory per cluster of the grid, kept by the process";
  }
  return d;
}

// The knobs' words by switches rather than tables, so that the compiler names a value left out
// (-Wswitch): alike in shape to the other enum words of the tree, with words of their own.
const char* MainloopName(Mainloop m) {
  switch (m) {
    case Mainloop::kMmaCpAsync:
      return "mma.sync+cp.async";
    case Mainloop::kMmaTma:
      return "mma.sync+tma";
    case Mainloop::kWgmma:
      return "wgmma+tma";
  }
  return "?";
}

const char* EpilogueName(Epilogue e) {
  switch (e) {
    case Epilogue::kWide:
      return "16B";
    case Epilogue::kTmaStore:
      return "tma_store";
  }
  return "?";
}

}  // namespace

namespace sm90 {

std::string DescribeLaunch(const LaunchPlan& l) {
  std::string d = !l.guarded ? "own build" : "guarded build";
  if (l.shape.Pads()) {
    std::string what;
    for (auto [pads, name] : {std::pair{l.shape.pad_a, "A"}, std::pair{l.shape.pad_b, "B"},
                              std::pair{l.shape.pad_c, "C"}}) {
      if (pads) what += what.empty() ? name : std::string(", ") + name;
    }
    d += " on padded copies of " + what;
  }
  const GridPlan& g = l.grid;
  const Knobs& k = g.build;
  const bool unknown = k.persistent && (k.Ctas() == 1 ? l.device.sms : l.device.pair_clusters) <= 0;
  if (unknown) {
    d += "; a persistent grid of as many CTAs as the device holds (no device known here)";
    if (l.grid.clusters_dropped) d += ", without clusters";
    return d;
  }
  d += "; " + std::to_string(g.ctas) + " CTAs";
  if (k.Ctas() > 1)
    d += " in " + std::to_string(g.Clusters()) + " clusters of " + std::to_string(k.Ctas());
  if (g.clusters_dropped) {
    d += " without clusters (the rung's clusters dropped: the grid is fitted to its rounds)";
  }
  if (!k.persistent) return d + ", one per unit";
  d += ", " + std::to_string(g.Rounds()) + (g.Rounds() == 1 ? " round" : " rounds");
  if (g.fitted) d += " (fitted)";
  if (g.sk.sk_clusters > 0) {
    d += ", stream-K: " + std::to_string(g.sk.dp_units) + " units whole, the last " +
         std::to_string(g.units - g.sk.dp_units) + " shared by " +
         std::to_string(g.sk.sk_clusters) + " clusters";
  }
  return d;
}

std::string ShapeError(const Problem& p, DType dtype, int block_m, int block_n) {
  if (p.dtype != dtype) {
    return "dtype must be " + std::string(ToString(dtype)) + " for this sm90 rung, got " +
           std::string(ToString(p.dtype));
  }
  // Coordinates and the tile count are 32-bit in the kernels (TMA takes int32 coordinates); K
  // and N are rounded up to a 16-byte chunk where their rows are padded (sm90_shapes.h): 8 bf16,
  // 16 e4m3.
  const int64_t kLimit = dtype == DType::kFP8 ? INT32_MAX - 15 : INT32_MAX - 7;
  for (auto [field, v] : {std::pair{"m", p.m}, std::pair{"n", p.n}, std::pair{"k", p.k}}) {
    if (v <= 0) return std::string(field) + " must be positive, got " + std::to_string(v);
    if (v > kLimit) {
      return std::string(field) + " must be at most " + std::to_string(kLimit) +
             " (32-bit coordinates), got " + std::to_string(v);
    }
  }
  if (((p.m + block_m - 1) / block_m) * ((p.n + block_n - 1) / block_n) > INT32_MAX) {
    return "m*n must be below 2^31 tiles of " + std::to_string(block_m) + "x" +
           std::to_string(block_n);
  }
  return "";
}

}  // namespace sm90

namespace {

// The catalog entry of a rung of the Hopper ladders.
Variant OfRung(const Rung& r) {
  const DType dtype = RungDType(r.knobs);
  Variant v;
  v.name = std::string(r.name);
  v.family = "sm90";
  v.description = Describe(r);
  v.params = {{"rung", std::string(r.id)},
              {"mainloop", MainloopName(r.knobs.mainloop)},
              {"warp_specialized", r.knobs.warp_specialized},
              {"persistent", r.knobs.persistent},
              {"cluster_m", r.knobs.cluster_m},
              {"cluster_n", r.knobs.cluster_n},
              {"pending", r.knobs.pending},
              {"tile_order", r.knobs.grouped_order ? "grouped8" : "row"},
              {"epilogue", EpilogueName(r.knobs.epilogue)},
              {"schedule", r.knobs.stream_k ? "stream_k" : "static"},
              {"epilogue_overlap", r.knobs.overlap_epilogue ? "next_tile" : "none"},
              {"grid", !r.knobs.persistent ? "one_per_unit"
                       : r.knobs.fit_grid  ? "fitted_to_rounds"
                                           : "all_that_fit"},
              {"clusters", r.knobs.Ctas() == 1             ? "none"
                           : r.knobs.clusters_where_shared ? "where_the_last_round_is_shared"
                                                           : "always"},
              {"stages", r.knobs.stages},
              {"arch", "sm_90a"}};
  v.dtypes = {dtype};
  v.tile = {r.knobs.block_m, r.knobs.block_n, BlockK(r.knobs)};
  v.threads = Threads(r);
  v.smem_bytes = SmemBytes(r.knobs);
  v.b_layout = BLayout::kNK;
  v.bit_exact_family = false;
  v.can_implement = [dtype, block_m = r.knobs.block_m, block_n = r.knobs.block_n](
                        const Problem& p) { return sm90::ShapeError(p, dtype, block_m, block_n); };
  v.build = [knobs = r.knobs](const Problem& p, const Residency& device) {
    return sm90::DescribeLaunch(sm90::PlanLaunch(knobs, p, device));
  };
  // The padded operands PadOperands keeps (the worker's buffers are aligned, so only K and N
  // decide): A and B in rows of the rounded K, C in rows of the rounded N.
  v.scratch_bytes = [knobs = r.knobs](const Problem& p) {
    const ShapePlan s = PlanShape(p, knobs, 0, 0, 0);
    const int64_t in = OperandBytes(knobs);
    return std::vector<int64_t>{s.pad_a ? p.m * s.k * in : 0, s.pad_b ? s.n * s.k * in : 0,
                                s.pad_c ? p.m * s.n * 2 : 0};
  };
  return v;
}

// The entry of a build that stores C transposed (Knobs::store_transposed): a GEMM as any other,
// run as C^T = B A^T (sm90_tiles.cu swaps the operands), so its plan, refusals and padding are
// those of the swapped problem; M is the kernel's N, so its rows must be whole 16-byte chunks of
// C (C cannot be padded: it is written transposed).
Variant OfSwappedRung(const Rung& r) {
  Variant v = OfRung(r);
  v.params.insert(v.params.begin() + 1, {"operands", "swapped"});
  const DType dtype = RungDType(r.knobs);
  v.can_implement = [dtype, block_m = r.knobs.block_m,
                     block_n = r.knobs.block_n](const Problem& p) -> std::string {
    if (std::string e = sm90::ShapeError(sm90::SwappedProblem(p), dtype, block_m, block_n);
        !e.empty())
      return e;
    if (p.m % 8 != 0)
      return "m must be a multiple of 8 for this build (A and B swapped, C stored transposed: M "
             "is the kernel's N, whose rows of C are not padded), got " +
             std::to_string(p.m);
    return "";
  };
  v.build = [knobs = r.knobs](const Problem& p, const Residency& device) {
    return "A and B swapped, C stored transposed: " +
           sm90::DescribeLaunch(sm90::PlanLaunch(knobs, sm90::SwappedProblem(p), device));
  };
  v.scratch_bytes = [knobs = r.knobs](const Problem& p) {
    const ShapePlan s = PlanShape(sm90::SwappedProblem(p), knobs, 0, 0, 0);
    const int64_t in = OperandBytes(knobs);  // the kernel's A is the caller's B, its B the A
    return std::vector<int64_t>{s.pad_b ? p.m * s.k * in : 0, s.pad_a ? p.n * s.k * in : 0, 0};
  };
  return v;
}

// A rung of the small-shape ladder (sm90_few_rows.h): its base rung's entry, the few-row path
// where it takes a problem (its own launch size and build there) and, past it, the build with a
// smaller tile (`tile`, null for none) at the rows the rung gives it.
Variant OfSmallRung(const SmallRung& r, const Variant& base, const Variant* tile,
                    const Variant* swapped) {
  Variant v = base;
  v.name = std::string(r.name);
  v.description = std::string(r.id) + ": " + std::string(r.adds) + ". Otherwise " + base.name +
                  "'s launch: " + base.description;
  v.params.insert(v.params.begin(), {"split_k", int64_t(r.split)});
  v.params.insert(v.params.begin(), {"few_cols", int64_t(r.few_cols)});
  v.params.insert(v.params.begin(), {"few_rows", int64_t(r.few_rows)});
  if (r.mma_from > 0) v.params.insert(v.params.begin(), {"mma_from_rows", int64_t(r.mma_from)});
  if (r.mma_warps != 4) v.params.insert(v.params.begin(), {"mma_warps", int64_t(r.mma_warps)});
  if (r.mma_stages > 0) v.params.insert(v.params.begin(), {"mma_stages", int64_t(r.mma_stages)});
  if (tile != nullptr) {
    v.params.insert(v.params.begin(), {"tile_rows", int64_t(r.tile_rows)});
    v.params.insert(v.params.begin(), {"tile_base", tile->name});
  }
  if (swapped != nullptr) {
    v.params.insert(v.params.begin(), {"swap_cols", int64_t(r.swap_cols)});
    v.params.insert(v.params.begin(), {"swap_base", swapped->name});
  }
  v.params.insert(v.params.begin(), {"base", std::string(base.name)});
  for (auto& [key, value] : v.params)
    if (key == "rung") value = std::string(r.id);
  // The Hopper entry that runs p where the few-row path does not.
  std::vector<Variant> entries = {base};
  if (tile != nullptr) entries.push_back(*tile);
  if (swapped != nullptr) entries.push_back(*swapped);
  auto hopper = [r, entries](const Problem& p) -> const Variant& {
    return PickHopper(r, entries, p);
  };
  v.launch_at = [r, hopper](const Problem& p) {
    if (const FewRowsPlan plan = PlanFewRows(p, r, 0, 0); plan.runs)
      return LaunchSize{plan.threads, plan.smem};
    const Variant& h = hopper(p);
    return h.launch_at ? h.launch_at(p) : LaunchSize{h.threads, h.smem_bytes};
  };
  v.can_implement = [hopper](const Problem& p) { return hopper(p).can_implement(p); };
  v.build = [r, hopper](const Problem& p, const Residency& device) {
    const FewRowsPlan plan = PlanFewRows(p, r, 0, 0);
    if (!plan.runs) {
      const Variant& h = hopper(p);
      return h.name == r.base ? h.build(p, device) : h.name + ": " + h.build(p, device);
    }
    const std::string per =
        plan.split > 1 ? "block, K split " + std::to_string(plan.split) + " ways among its warps"
                       : "warp";
    return std::string(plan.swapped ? "few-row path, A and B swapped (C stored transposed)"
                                    : "few-row path") +
           (plan.mma ? " on tensor cores (mma.sync m16n8k16)" : "") + ": a build of " +
           std::to_string(plan.rows) + " rows, " + std::to_string(plan.cols) +
           (plan.cols == 1 ? " column" : " columns") + " of C per " + per + ", " +
           std::to_string(plan.blocks) + " blocks of " + std::to_string(plan.threads) + " threads" +
           (plan.stages > 0 ? ", B through a ring of " + std::to_string(plan.stages) +
                                  " cp.async stages a warp (" + std::to_string(plan.smem / 1024) +
                                  " KiB of shared memory a block)"
                            : "");
  };
  v.scratch_bytes = [r, hopper](const Problem& p) {
    return PlanFewRows(p, r, 0, 0).runs ? std::vector<int64_t>{0, 0, 0}
                                        : hopper(p).scratch_bytes(p);
  };
  return v;
}

}  // namespace

void RegisterSm90(Registry& registry) {
  std::vector<const Rung*> rungs;
  for (const Rung& r : kRungs) rungs.push_back(&r);
  for (const Rung& r : kFp8Rungs) rungs.push_back(&r);
  for (const Rung& r : kTileRungs) rungs.push_back(&r);
  for (const Rung* r : rungs)
    registry.Add(r->knobs.store_transposed ? OfSwappedRung(*r) : OfRung(*r));
  for (const SmallRung& r : kSmallRungs) {
    const Variant* base = registry.Find(r.base);
    const Variant* tile = r.tile_rows > 0 ? registry.Find(r.tile_base) : nullptr;
    const Variant* swapped = r.swap_cols > 0 ? registry.Find(r.swap_base) : nullptr;
    if (base != nullptr) registry.Add(OfSmallRung(r, *base, tile, swapped));
  }
  RegisterSm90BucketRungs(registry);  // after every build their tables can name
}

}  // namespace ablation::kernels
