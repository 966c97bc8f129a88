// Advice from the numbers: the compute/load ratio of a block tile, the rule of thumb for
// choosing a pipelining variant from it (PipelineRule), the single and double buffer shared
// memory budget against the architecture's occupancy cliff, and the answer the daemon's own
// measurements of the pipe_ family give for that tile. Pure functions: no store, no gRPC.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/records.h"
#include "db/store.h"
#include "kernels/common/problem.h"
#include "server/core/base/status.h"

namespace ablation::core {

/// Shared memory limits of one architecture (bytes; KB = 1024 bytes).
struct ArchLimits {
  std::string_view arch;  ///< "sm_86"
  std::string_view gpus;  ///< "GA104 (RTX 3070/3080)"
  int64_t smem_per_sm = 0;
  int64_t smem_per_block_max = 0;  ///< the opt-in maximum of one block
  int max_blocks_per_sm = 0;       ///< the hardware's cap, whatever the shared memory
};

/// The architectures the advice knows; unknown ones are refused (naming the known ones).
const std::vector<ArchLimits>& KnownArchs();
const ArchLimits* FindArch(std::string_view arch);

struct AdviseInput {
  int64_t bm = 0;
  int64_t bn = 0;
  int64_t bk = 0;
  std::string dtype;  ///< bf16, fp16, fp32, tf32, int8
  std::string arch;   ///< sm_80, sm_86, sm_90
};

/// The rule of thumb for choosing a pipelining variant from the compute/load ratio (thresholds
/// measured on GA104 with an IGEMM at 4096^3).
enum class PipelineRule {
  kCpAsync,      ///< ratio < 5: prefer cp.async (LDGSTS)
  kMeasureBoth,  ///< 5 <= ratio <= 20: implement LDG and cp.async, benchmark
  kMayNotPay,    ///< ratio > 20: warp interleaving may already hide the loads
};
std::string_view ToString(
    PipelineRule rule);  // "cp.async", "measure both", "pipelining may not pay"

struct SmemBudget {
  int64_t a_bytes = 0;       ///< BM*BK*sizeof(T), one buffer
  int64_t b_bytes = 0;       ///< BK*BN*sizeof(T), one buffer
  int64_t single_bytes = 0;  ///< a + b
  int64_t double_bytes = 0;  ///< 2 (a + b)
  int64_t smem_per_sm = 0;
  int64_t smem_per_block_max = 0;
  /// Above this a block leaves room for only one block per SM (half the SM's shared memory): the
  /// occupancy "cliff" (50 KB on GA104).
  int64_t cliff_bytes = 0;
  int blocks_single = 0;  ///< blocks per SM that shared memory allows, single buffer (0: no fit)
  int blocks_double = 0;
  bool double_fits = false;          ///< double_bytes <= smem_per_block_max
  bool double_under_cliff = false;   ///< double_bytes <= cliff_bytes (at least 2 blocks per SM)
  bool double_costs_blocks = false;  ///< blocks_double < blocks_single
};

struct Advice {
  double ratio = 0;  ///< 2*BM*BN*BK / ((BM*BK + BK*BN) * sizeof(T)), FLOP per byte loaded
  int element_bytes = 0;
  PipelineRule rule = PipelineRule::kMeasureBoth;
  std::string rule_reason;  ///< one sentence
  std::string arch_gpus;
  SmemBudget smem;
  std::string smem_verdict;  ///< one sentence about the double buffer and the cliff
};

double ComputeLoadRatio(int64_t bm, int64_t bn, int64_t bk, int element_bytes);
PipelineRule RuleFor(double ratio);
SmemBudget Budget(int64_t bm, int64_t bn, int64_t bk, int element_bytes, const ArchLimits& arch);

/// Validates (InvalidArgument naming the field) and computes the advice.
Status Advise(const AdviseInput& input, Advice* out);

// ---- the measured answer

/// "f16" / "i8" / "f32" for the dtypes the pipe_ family has, nullopt for the others.
std::optional<std::string> PipeTypeTag(std::string_view dtype);
/// pipe_{baseline,ldg,cpasync}_{tag}_{BM}x{BN}x{BK}, in that order.
std::vector<std::string> PipeVariantNames(std::string_view tag, int64_t bm, int64_t bn, int64_t bk);

struct MeasuredPoint {
  std::string variant;
  int64_t m = 0, n = 0, k = 0;
  double tflops = 0;
  double median_ms = 0;
  int64_t run_id = 0;
  int64_t measurement_id = 0;
  int64_t created_at_ms = 0;
};

struct MeasuredAnswer {
  bool measured = false;
  std::string note;             ///< "not measured on this GPU yet", or what was left out and why
  int64_t m = 0, n = 0, k = 0;  ///< the shape compared
  std::vector<MeasuredPoint> points;  ///< one per variant measured at that shape, fastest first
  std::string winner;
  double winner_vs_baseline = 0;   ///< winner's TFLOPS / baseline's (0: baseline not measured)
  double winner_vs_runner_up = 0;  ///< winner's TFLOPS / the next one's (0: only one measured)
  std::string summary;             ///< one sentence
};

/// From ok measurements of the given variant names (any shape, any order): the latest of each
/// variant per shape; the shape compared is 4096^3 where any was measured there, else the shape
/// with most variants measured (ties: the most recent).
MeasuredAnswer SummarizeMeasured(const std::vector<std::string>& variants,
                                 const std::vector<v1::Measurement>& records);

/// SummarizeMeasured over the store's ok measurements of `variants` taken on the GPU with this
/// UUID (every GPU's when uuid is empty, and the note says so). Reads the store; still no gRPC.
MeasuredAnswer MeasuredOnGpu(db::Store& store, const std::vector<std::string>& variants,
                             const std::string& uuid);

// ---- the rule against the measurement

/// Whether this GPU's measurements bear the rule out. The rule's claim is the gain of the best
/// pipelined variant over the baseline that was measured on GA104 for its ratio band: kCpAsync at
/// least +15% with cp.async the fastest pipelining, kMeasureBoth at least +5%, kMayNotPay at most
/// +5%. More gain than a paying rule expects does not contradict it; less, or a different winner,
/// does.
enum class RuleCheck {
  kUnmeasured,    ///< no baseline and pipelined variant measured at one shape on this GPU
  kAgrees,        ///< the measured gain is within what the rule expects
  kContradicted,  ///< it is not: the measured answer leads
};
std::string_view ToString(RuleCheck check);  // "not measured", "agrees", "contradicted"

struct RuleVerdict {
  RuleCheck check = RuleCheck::kUnmeasured;
  double gain = 0;       ///< best pipelined TFLOPS / baseline TFLOPS - 1 (kUnmeasured: 0)
  std::string best;      ///< the pipelined variant of that gain
  std::string expected;  ///< "at most +5%", the rule's claim in words
  /// The first line of the answer: the measured one where it contradicts the rule ("measured on
  /// this GPU: pipe_cpasync_f16_128x128x32 +38.2% over the baseline at 4096x4096x4096 ..."),
  /// else "" (the rule leads).
  std::string lead;
  std::string verdict;  ///< one sentence on the rule: "contradicted by this GPU's measurement: ..."
};

/// The rule against `measured` (SummarizeMeasured of `variants`, the baseline first).
RuleVerdict CheckRule(PipelineRule rule, const MeasuredAnswer& measured,
                      const std::vector<std::string>& variants);

// ---- the shared memory budget of one registered variant (ablation-client budget)

struct BudgetRow {
  int stages = 0;
  int64_t bytes = 0;
  int blocks_per_sm = 0;  ///< as far as shared memory allows; 0: does not fit
  bool over_cliff = false;
  bool fits = false;
  bool this_variant = false;
};

struct VariantBudget {
  const ArchLimits* arch = nullptr;
  int64_t cliff_bytes = 0;      ///< half the SM's shared memory: above it, one block per SM
  std::vector<BudgetRow> rows;  ///< one per pipeline depth 1..max(4, the variant's)
  std::string verdict;
};

/// The shared memory budget table for a variant with a shared-memory tile: one stage of A and B
/// tiles, then each further stage, against the architecture. Library entries (no tile) are refused.
Status BudgetForVariant(const std::string& name, int tile_m, int tile_n, int tile_k,
                        int element_bytes, int stages, int64_t smem_bytes, std::string_view arch,
                        VariantBudget* out);

}  // namespace ablation::core
