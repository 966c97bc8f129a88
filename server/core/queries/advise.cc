#include "server/core/queries/advise.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

namespace ablation::core {

namespace {

constexpr int64_t kKB = 1024;
/// The shape the rule's thresholds were measured at (4096^3 on GA104); preferred when comparing.
constexpr int64_t kPreferredSize = 4096;

std::string Kb(int64_t bytes) {
  char buf[32];
  if (bytes % kKB == 0)
    std::snprintf(buf, sizeof buf, "%lld KB", (long long)(bytes / kKB));
  else
    std::snprintf(buf, sizeof buf, "%.1f KB", double(bytes) / double(kKB));
  return buf;
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string ShapeText(int64_t m, int64_t n, int64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

int BlocksBySmem(int64_t bytes, const ArchLimits& arch) {
  if (bytes > arch.smem_per_block_max) return 0;
  if (bytes <= 0) return arch.max_blocks_per_sm;
  return int(std::min<int64_t>(arch.smem_per_sm / bytes, arch.max_blocks_per_sm));
}

}  // namespace

const std::vector<ArchLimits>& KnownArchs() {
  static const std::vector<ArchLimits> archs = {
      {"sm_80", "A100 (GA100)", 164 * kKB, 163 * kKB, 32},
      {"sm_86", "GA102/GA104 (RTX 30xx, A10, A40)", 100 * kKB, 99 * kKB, 16},
      {"sm_89", "AD10x (RTX 40xx, L4, L40)", 100 * kKB, 99 * kKB, 24},
      {"sm_90", "H100/H200 (GH100)", 228 * kKB, 227 * kKB, 32},
  };
  return archs;
}

const ArchLimits* FindArch(std::string_view arch) {
  for (const auto& a : KnownArchs())
    if (a.arch == arch) return &a;
  return nullptr;
}

// Words of an enum by a switch rather than a table: the compiler names any value left out
// (-Wswitch). Such switches look alike across the core; what they map differs.
std::string_view ToString(PipelineRule rule) {
  switch (rule) {
    case PipelineRule::kCpAsync:
      return "cp.async";
    case PipelineRule::kMeasureBoth:
      return "measure both";
    case PipelineRule::kMayNotPay:
      return "pipelining may not pay";
  }
  return "?";
}

double ComputeLoadRatio(int64_t bm, int64_t bn, int64_t bk, int element_bytes) {
  const double flops = 2.0 * double(bm) * double(bn) * double(bk);
  const double bytes = (double(bm) * double(bk) + double(bk) * double(bn)) * double(element_bytes);
  return flops / bytes;
}

PipelineRule RuleFor(double ratio) {
  if (ratio < 5.0) return PipelineRule::kCpAsync;
  if (ratio <= 20.0) return PipelineRule::kMeasureBoth;
  return PipelineRule::kMayNotPay;
}

SmemBudget Budget(int64_t bm, int64_t bn, int64_t bk, int element_bytes, const ArchLimits& arch) {
  SmemBudget b;
  b.a_bytes = bm * bk * element_bytes;
  b.b_bytes = bk * bn * element_bytes;
  b.single_bytes = b.a_bytes + b.b_bytes;
  b.double_bytes = 2 * b.single_bytes;
  b.smem_per_sm = arch.smem_per_sm;
  b.smem_per_block_max = arch.smem_per_block_max;
  b.cliff_bytes = arch.smem_per_sm / 2;
  b.blocks_single = BlocksBySmem(b.single_bytes, arch);
  b.blocks_double = BlocksBySmem(b.double_bytes, arch);
  b.double_fits = b.double_bytes <= arch.smem_per_block_max;
  b.double_under_cliff = b.double_bytes <= b.cliff_bytes;
  b.double_costs_blocks = b.blocks_double < b.blocks_single;
  return b;
}

Status Advise(const AdviseInput& in, Advice* out) {
  if (in.bm <= 0) return InvalidArgument("bm: the tile's M must be positive");
  if (in.bn <= 0) return InvalidArgument("bn: the tile's N must be positive");
  if (in.bk <= 0) return InvalidArgument("bk: the tile's K must be positive");
  // Beyond this no block tile fits any shared memory; also keeps the products far from overflow.
  constexpr int64_t kMaxTileDim = 1 << 16;
  if (in.bm > kMaxTileDim || in.bn > kMaxTileDim || in.bk > kMaxTileDim)
    return InvalidArgument((in.bm > kMaxTileDim   ? std::string("bm")
                            : in.bn > kMaxTileDim ? "bn"
                                                  : "bk") +
                           ": at most " + std::to_string(kMaxTileDim));
  std::optional<kernels::DType> dtype = kernels::ParseDType(in.dtype);
  if (!dtype)
    return InvalidArgument("dtype: unknown dtype '" + in.dtype +
                           "'; known: bf16, fp16, fp32, tf32, int8");
  const ArchLimits* arch = FindArch(in.arch);
  if (!arch) {
    std::string known;
    for (const auto& a : KnownArchs()) known += (known.empty() ? "" : ", ") + std::string(a.arch);
    return InvalidArgument("arch: unknown architecture '" + in.arch + "'; known: " + known);
  }

  Advice a;
  a.element_bytes = kernels::ElementBytes(*dtype);
  a.ratio = ComputeLoadRatio(in.bm, in.bn, in.bk, a.element_bytes);
  a.rule = RuleFor(a.ratio);
  const std::string r = Fixed(a.ratio, 1) + ":1";
  switch (a.rule) {
    case PipelineRule::kCpAsync:
      a.rule_reason = "ratio " + r +
                      " is below 5: the loads dominate; prefer cp.async (LDGSTS), which bypasses "
                      "the register file (the pipelining study: cp.async +35% on an int8 GEMM at "
                      "4096^3, register pipelining +18%)";
      break;
    case PipelineRule::kMeasureBoth:
      a.rule_reason = "ratio " + r +
                      " is between 5 and 20: implement both LDG-register and cp.async and let the "
                      "benchmark decide (the pipelining study expects +5-15%)";
      break;
    case PipelineRule::kMayNotPay:
      a.rule_reason = "ratio " + r +
                      " is above 20: with 8+ active warps, warp interleaving may already hide the "
                      "loads; pipelining may not pay (the pipelining study saw 0-5% or a "
                      "regression)";
      break;
  }
  a.arch_gpus = std::string(arch->gpus);
  a.smem = Budget(in.bm, in.bn, in.bk, a.element_bytes, *arch);
  const SmemBudget& s = a.smem;
  const std::string where = std::string(arch->arch) + " (" + Kb(s.smem_per_sm) + "/SM, " +
                            Kb(s.smem_per_block_max) + " per block at most)";
  if (!s.double_fits) {
    a.smem_verdict = "the double buffer (" + Kb(s.double_bytes) + ") does not fit one block on " +
                     where + ": halve BK or BM, or prefetch into registers (LDG) with one buffer";
  } else if (!s.double_under_cliff) {
    a.smem_verdict = "the double buffer (" + Kb(s.double_bytes) + ") crosses the " +
                     Kb(s.cliff_bytes) + " cliff on " + where + ": " +
                     std::to_string(s.blocks_double) + " block/SM instead of " +
                     std::to_string(s.blocks_single) +
                     "; halve BK or BM, or prefetch into registers (LDG) with one buffer";
  } else {
    a.smem_verdict =
        "the double buffer (" + Kb(s.double_bytes) + ") stays under the " + Kb(s.cliff_bytes) +
        " cliff on " + where + ": " + std::to_string(s.blocks_double) +
        " blocks/SM by shared memory" +
        (s.double_costs_blocks ? " (single buffer: " + std::to_string(s.blocks_single) + ")" : "");
  }
  *out = std::move(a);
  return Status::Ok();
}

std::optional<std::string> PipeTypeTag(std::string_view dtype) {
  if (dtype == "fp16") return "f16";
  if (dtype == "int8") return "i8";
  if (dtype == "fp32") return "f32";
  return std::nullopt;
}

std::vector<std::string> PipeVariantNames(std::string_view tag, int64_t bm, int64_t bn,
                                          int64_t bk) {
  std::vector<std::string> names;
  for (const char* p : {"baseline", "ldg", "cpasync"})
    names.push_back("pipe_" + std::string(p) + "_" + std::string(tag) + "_" +
                    ShapeText(bm, bn, bk));
  return names;
}

MeasuredAnswer SummarizeMeasured(const std::vector<std::string>& variants,
                                 const std::vector<v1::Measurement>& records) {
  MeasuredAnswer ans;
  // shape -> variant -> latest ok record
  using ShapeKey = std::tuple<int64_t, int64_t, int64_t>;
  std::map<ShapeKey, std::map<std::string, const v1::Measurement*>> latest;
  for (const auto& r : records) {
    if (r.status() != v1::MEASUREMENT_STATUS_OK || r.tflops() <= 0) continue;
    if (std::find(variants.begin(), variants.end(), r.variant()) == variants.end()) continue;
    auto& slot = latest[{r.shape().m(), r.shape().n(), r.shape().k()}][r.variant()];
    if (!slot || std::make_pair(r.created_at_ms(), r.id()) >
                     std::make_pair(slot->created_at_ms(), slot->id()))
      slot = &r;
  }
  if (latest.empty()) {
    ans.summary = "not measured on this GPU yet";
    return ans;
  }
  auto newest = [](const std::map<std::string, const v1::Measurement*>& m) {
    int64_t t = 0;
    for (const auto& [_, r] : m) t = std::max(t, r->created_at_ms());
    return t;
  };
  const ShapeKey preferred{kPreferredSize, kPreferredSize, kPreferredSize};
  auto chosen = latest.find(preferred);
  if (chosen == latest.end()) {
    chosen = latest.begin();
    for (auto it = latest.begin(); it != latest.end(); ++it) {
      auto key = [&](const auto& e) { return std::make_pair(e.second.size(), newest(e.second)); };
      if (key(*it) > key(*chosen)) chosen = it;
    }
  }
  std::tie(ans.m, ans.n, ans.k) = chosen->first;
  for (const auto& [name, r] : chosen->second) {
    MeasuredPoint p;
    p.variant = name;
    p.m = r->shape().m();
    p.n = r->shape().n();
    p.k = r->shape().k();
    p.tflops = r->tflops();
    p.median_ms = r->stats().median_ms();
    p.run_id = r->run_id();
    p.measurement_id = r->id();
    p.created_at_ms = r->created_at_ms();
    ans.points.push_back(p);
  }
  std::sort(ans.points.begin(), ans.points.end(),
            [](const MeasuredPoint& a, const MeasuredPoint& b) { return a.tflops > b.tflops; });
  ans.measured = true;
  ans.winner = ans.points.front().variant;
  const std::string shape = ShapeText(ans.m, ans.n, ans.k);
  const std::string& baseline = variants.empty() ? std::string() : variants.front();
  double base_tflops = 0;
  for (const auto& p : ans.points)
    if (p.variant == baseline) base_tflops = p.tflops;
  if (base_tflops > 0) ans.winner_vs_baseline = ans.points.front().tflops / base_tflops;
  if (ans.points.size() > 1) ans.winner_vs_runner_up = ans.points[0].tflops / ans.points[1].tflops;

  ans.summary =
      ans.winner + " won at " + shape + " (" + Fixed(ans.points.front().tflops, 2) + " TFLOPS";
  if (ans.winner == baseline && ans.winner_vs_runner_up > 0)
    ans.summary += ", " + Fixed((ans.winner_vs_runner_up - 1) * 100, 1) + "% ahead of " +
                   ans.points[1].variant + ": pipelining did not pay";
  else if (ans.winner_vs_baseline > 0)
    ans.summary += ", " + Fixed(ans.winner_vs_baseline, 2) + "x the baseline";
  if (ans.winner != baseline && ans.winner_vs_runner_up > 0 && ans.points[1].variant != baseline)
    ans.summary += ", " + Fixed(ans.winner_vs_runner_up, 2) + "x " + ans.points[1].variant;
  ans.summary += ")";
  std::vector<std::string> missing;
  for (const auto& v : variants)
    if (!chosen->second.count(v)) missing.push_back(v);
  if (!missing.empty()) {
    ans.note = "not measured at " + shape + ": ";
    for (size_t i = 0; i < missing.size(); ++i) ans.note += (i ? ", " : "") + missing[i];
  }
  if (chosen->first != preferred) {
    if (!ans.note.empty()) ans.note += "; ";
    ans.note += "no measurement at 4096x4096x4096, compared at " + shape;
  }
  return ans;
}

// Words of an enum by a switch rather than a table: the compiler names any value left out
// (-Wswitch). Such switches look alike across the core; what they map differs.
std::string_view ToString(RuleCheck check) {
  switch (check) {
    case RuleCheck::kUnmeasured:
      return "not measured";
    case RuleCheck::kAgrees:
      return "agrees";
    case RuleCheck::kContradicted:
      return "contradicted";
  }
  return "?";
}

RuleVerdict CheckRule(PipelineRule rule, const MeasuredAnswer& measured,
                      const std::vector<std::string>& variants) {
  RuleVerdict v;
  // The gains measured on GA104 per ratio band; a paying rule's range is open above.
  constexpr double kPays = 0.15, kSome = 0.05;
  switch (rule) {
    case PipelineRule::kCpAsync:
      v.expected = "at least +15% with cp.async the fastest";
      break;
    case PipelineRule::kMeasureBoth:
      v.expected = "at least +5%";
      break;
    case PipelineRule::kMayNotPay:
      v.expected = "at most +5%";
      break;
  }
  if (!measured.measured || variants.empty()) return v;
  const std::string& baseline = variants.front();
  const MeasuredPoint* base = nullptr;
  const MeasuredPoint* best = nullptr;  // points are fastest first
  for (const MeasuredPoint& p : measured.points) {
    if (p.variant == baseline) {
      base = &p;
    } else if (!best) {
      best = &p;
    }
  }
  if (!base || !best || base->tflops <= 0) return v;
  v.best = best->variant;
  v.gain = best->tflops / base->tflops - 1;
  const bool cpasync_best = best->variant.find("_cpasync_") != std::string::npos;
  bool holds = false;
  switch (rule) {
    case PipelineRule::kCpAsync:
      holds = v.gain >= kPays && cpasync_best;
      break;
    case PipelineRule::kMeasureBoth:
      holds = v.gain >= kSome;
      break;
    case PipelineRule::kMayNotPay:
      holds = v.gain <= kSome;
      break;
  }
  v.check = holds ? RuleCheck::kAgrees : RuleCheck::kContradicted;
  const std::string gain = (v.gain >= 0 ? "+" : "") + Fixed(v.gain * 100, 1) + "%";
  const std::string shape = ShapeText(measured.m, measured.n, measured.k);
  const std::string what = v.best + " " + gain + " over " + baseline + " at " + shape + " (" +
                           Fixed(best->tflops, 2) + " against " + Fixed(base->tflops, 2) +
                           " TFLOPS, run " + std::to_string(best->run_id) + ")";
  if (holds) {
    v.verdict = "this GPU's measurement agrees: " + what;
    return v;
  }
  const std::string pays = v.gain > kSome ? "pipelining pays here"
                           : v.gain > 0   ? "pipelining gains little here"
                                          : "pipelining does not pay here";
  v.lead = "measured on this GPU: " + what + ": " + pays;
  v.verdict = "contradicted by this GPU's measurement: the rule expects " + v.expected +
              ", this GPU measured " + gain +
              (rule == PipelineRule::kCpAsync && !cpasync_best && v.gain > 0
                   ? " with " + v.best + " the fastest"
                   : "");
  return v;
}

MeasuredAnswer MeasuredOnGpu(db::Store& store, const std::vector<std::string>& variants,
                             const std::string& uuid) {
  std::vector<v1::Measurement> records;
  std::map<int64_t, bool> run_on_gpu;  // run id -> taken on this GPU
  for (const auto& name : variants) {
    db::MeasurementFilter filter;
    filter.variant_glob = name;  // pipe_ names hold no glob characters: an exact match
    filter.status = v1::MEASUREMENT_STATUS_OK;
    filter.page_size = 1000;
    // Bounded: the latest per shape is all that counts, and 100k rows of one variant is plenty.
    for (int page = 0; page < 100; ++page) {
      db::MeasurementPage p = store.QueryMeasurements(filter);
      for (auto& r : p.measurements) {
        if (!uuid.empty()) {
          auto it = run_on_gpu.find(r.run_id());
          if (it == run_on_gpu.end()) {
            auto run = store.GetRun(r.run_id());
            it = run_on_gpu.emplace(r.run_id(), run && run->device().uuid() == uuid).first;
          }
          if (!it->second) continue;
        }
        records.push_back(std::move(r));
      }
      if (p.next_page_token.empty()) break;
      filter.page_token = p.next_page_token;
    }
  }
  MeasuredAnswer ans = SummarizeMeasured(variants, records);
  if (uuid.empty() && ans.measured)
    ans.note += std::string(ans.note.empty() ? "" : "; ") +
                "the daemon sees no GPU now: measurements of any GPU it ran on";
  return ans;
}

Status BudgetForVariant(const std::string& name, int tile_m, int tile_n, int tile_k,
                        int element_bytes, int stages, int64_t smem_bytes, std::string_view arch,
                        VariantBudget* out) {
  const ArchLimits* limits = FindArch(arch);
  if (!limits) {
    std::string known;
    for (const auto& a : KnownArchs()) known += (known.empty() ? "" : ", ") + std::string(a.arch);
    return InvalidArgument("arch: unknown architecture '" + std::string(arch) +
                           "'; known: " + known);
  }
  if (tile_m <= 0 || tile_n <= 0 || tile_k <= 0 || smem_bytes <= 0) {
    return InvalidArgument("variant: " + name +
                           " stages no tiles through shared memory of its own (a library "
                           "entry chooses its own), so it has no budget to show");
  }
  out->arch = limits;
  out->cliff_bytes = limits->smem_per_sm / 2;
  out->rows.clear();
  const int64_t stage_bytes =
      int64_t(tile_m) * tile_k * element_bytes + int64_t(tile_k) * tile_n * element_bytes;
  stages = std::max(stages, 1);
  for (int s = 1; s <= std::max(4, stages); ++s) {
    BudgetRow row;
    row.stages = s;
    // The variant's own row is its real allocation (it may pad); the others are the tile sum.
    row.bytes = s == stages ? smem_bytes : stage_bytes * s;
    row.fits = row.bytes <= limits->smem_per_block_max;
    row.blocks_per_sm = BlocksBySmem(row.bytes, *limits);
    row.over_cliff = row.bytes > out->cliff_bytes;
    row.this_variant = s == stages;
    out->rows.push_back(row);
  }
  const BudgetRow& mine = out->rows[size_t(stages - 1)];
  const BudgetRow& single = out->rows[0];
  std::string v = name + " needs " + Kb(mine.bytes) + " per block (" + std::to_string(stages) +
                  (stages == 1 ? " stage" : " stages") + ") on " + std::string(limits->gpus) + ": ";
  if (!mine.fits) {
    v += "more than the " + Kb(limits->smem_per_block_max) + " a block may have: it cannot run.";
  } else if (mine.over_cliff) {
    v += "past the " + Kb(out->cliff_bytes) +
         " cliff, one block per SM (single buffer: " + std::to_string(single.blocks_per_sm) + ").";
  } else if (mine.blocks_per_sm < single.blocks_per_sm) {
    v += std::to_string(mine.blocks_per_sm) + " blocks per SM by shared memory, against " +
         std::to_string(single.blocks_per_sm) + " single-buffered; under the " +
         Kb(out->cliff_bytes) + " cliff.";
  } else {
    v += std::to_string(mine.blocks_per_sm) +
         " blocks per SM by shared memory, as many as single-buffered; under the " +
         Kb(out->cliff_bytes) + " cliff.";
  }
  if (mine.bytes > 48 * kKB)
    v += " Above 48 KB it must opt in (cudaFuncAttributeMaxDynamicSharedMemorySize).";
  else if (mine.bytes == 48 * kKB)
    v += " That is at the 48 KB default limit: one byte more and it must opt in.";
  out->verdict = v;
  return Status::Ok();
}

}  // namespace ablation::core
