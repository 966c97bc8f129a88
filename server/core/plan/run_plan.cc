#include "server/core/plan/run_plan.h"

#include <cctype>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "kernels/user/contract_plan.h"
#include "server/core/plan/counters.h"
#include "server/core/plan/limits.h"
#include "server/core/plan/variant_names.h"
#include "server/core/plan/verification_policy.h"

namespace ablation::core {
namespace {

constexpr int64_t kMaxElements = std::numeric_limits<int32_t>::max();

// A timing option within [lo, hi] and finite (inf and 1e300 are numbers to protobuf).
Status CheckRange(double value, double lo, double hi, const char* field) {
  if (std::isfinite(value) && value >= lo && value <= hi) return Status::Ok();
  char text[160];
  std::snprintf(text, sizeof text, "timing.%s: %g is not in [%g, %g] (0: the daemon's default)",
                field, value, lo, hi);
  return InvalidArgument(text);
}

Status CheckTimingRanges(const v1::TimingOptions& t) {
  const struct {
    double value, lo, hi;
    const char* field;
  } ranges[] = {
      {double(t.min_samples()), 0, 1e6, "min_samples"},
      {double(t.max_samples()), 0, 1e7, "max_samples"},
      {double(t.warmup_count()), 0, 1e6, "warmup_count"},
      {t.min_seconds(), 0, 3600, "min_seconds"},
      {t.max_seconds(), 0, 3600, "max_seconds"},
      {t.warmup_seconds(), 0, 600, "warmup_seconds"},
      {t.target_noise(), 0, 0.999, "target_noise"},
      {t.low_clock_fraction(), 0, 0.999, "low_clock_fraction"},
      {t.window_seconds(), 0, 600, "window_seconds"},
      {t.settle_max_seconds(), 0, 3600, "settle_max_seconds"},
      {t.burst_seconds(), 0, 10, "burst_seconds"},
      {t.solo_seconds(), 0, 600, "solo_seconds"},
  };
  for (const auto& r : ranges)
    if (Status st = CheckRange(r.value, r.lo, r.hi, r.field); !st.ok()) return st;
  return Status::Ok();
}

std::string ShapeText(const kernels::Problem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
}

Status CheckShapes(const google::protobuf::RepeatedPtrField<v1::Shape>& shapes,
                   kernels::DType dtype, std::vector<kernels::Problem>* out) {
  if (shapes.empty()) return InvalidArgument("shapes: at least one shape is required");
  std::set<std::tuple<int64_t, int64_t, int64_t>> seen;
  for (int i = 0; i < shapes.size(); ++i) {
    const auto& s = shapes[i];
    std::string field = "shapes[" + std::to_string(i) + "]";
    if (s.m() <= 0 || s.n() <= 0 || s.k() <= 0) {
      return InvalidArgument(field + ": M, N and K must be positive, got " + std::to_string(s.m()) +
                             "x" + std::to_string(s.n()) + "x" + std::to_string(s.k()));
    }
    // The kernels index with 32-bit integers; refuse shapes past that range rather than overflow.
    // Multiplied with a check: (2^32)^2 wraps to 0 in int64 and would pass a plain comparison.
    int64_t mk = 0, kn = 0, mn = 0;
    if (!CheckedMultiply(s.m(), s.k(), &mk) || !CheckedMultiply(s.k(), s.n(), &kn) ||
        !CheckedMultiply(s.m(), s.n(), &mn) || mk > kMaxElements || kn > kMaxElements ||
        mn > kMaxElements) {
      return InvalidArgument(field + ": " + std::to_string(s.m()) + "x" + std::to_string(s.n()) +
                             "x" + std::to_string(s.k()) +
                             " has a matrix of more than 2^31-1 elements, beyond the kernels' "
                             "32-bit index range");
    }
    if (!seen.insert({s.m(), s.n(), s.k()}).second) continue;  // a repeated shape runs once
    out->push_back(kernels::Problem{s.m(), s.n(), s.k(), dtype});
  }
  return Status::Ok();
}

// Resolves the selectors; a glob keeps only variants that support the dtype, an explicit name
// that lacks it is an error.
Status ResolveVariants(const google::protobuf::RepeatedPtrField<std::string>& selectors,
                       const kernels::Registry& registry, kernels::DType dtype,
                       std::vector<const kernels::Variant*>* out) {
  if (selectors.empty()) return InvalidArgument("variants: at least one variant is required");
  std::set<const kernels::Variant*> seen;
  for (int i = 0; i < selectors.size(); ++i) {
    std::string field = "variants[" + std::to_string(i) + "]";
    std::vector<const kernels::Variant*> found;
    Status st = Resolve(registry, selectors[i], field, &found);
    if (!st.ok()) return st;
    bool glob = IsGlob(selectors[i]);
    size_t kept = 0;
    for (const auto* v : found) {
      if (!v->Supports(dtype)) {
        if (glob) continue;
        std::string have;
        for (auto d : v->dtypes)
          have += (have.empty() ? "" : ", ") + std::string(kernels::ToString(d));
        return InvalidArgument(field + ": variant " + v->name + " has no " +
                               std::string(kernels::ToString(dtype)) + " kernel (it has: " + have +
                               ")");
      }
      ++kept;
      if (seen.insert(v).second) out->push_back(v);
    }
    if (kept == 0) {
      return InvalidArgument(field + ": no variant matching '" + selectors[i] + "' has a " +
                             std::string(kernels::ToString(dtype)) + " kernel");
    }
  }
  return Status::Ok();
}

Status CheckFits(const RunPlan& plan, const DeviceLimits& device, bool verify) {
  if (!device.known) return Status::Ok();
  for (const auto* v : plan.variants) {
    if (std::string why = ArchRefusal(*v, device); !why.empty())
      return FailedPrecondition("variants: " + why);
  }
  // A kernel's scratch buffers (the sm90 family's padded operands) are kept and grown by the
  // worker: each one's largest size in the run counts beside every problem, whatever order the
  // rounds take.
  std::vector<int64_t> kept;
  for (const auto& p : plan.problems)
    for (const auto* v : plan.variants) {
      if (!v->scratch_bytes) continue;
      const std::vector<int64_t> bytes = v->scratch_bytes(p);
      if (kept.size() < bytes.size()) kept.resize(bytes.size());
      for (size_t i = 0; i < bytes.size(); ++i) kept[i] = std::max(kept[i], bytes[i]);
    }
  int64_t scratch = 0;
  for (int64_t b : kept) scratch += b;
  for (const auto& p : plan.problems) {
    int64_t need = RequiredDeviceBytes(p, device, verify) + scratch;
    // Keep a margin for the CUDA context, cuBLAS and fragmentation.
    if (double(need) > 0.9 * double(device.memory_bytes)) {
      return InvalidArgument("shapes: " + ShapeText(p) + " needs " + std::to_string(need >> 20) +
                             " MiB of device memory; the device has " +
                             std::to_string(device.memory_bytes >> 20) + " MiB");
    }
  }
  return Status::Ok();
}

// The problems of a kernel of its own contract: each of the plan's sizes read against its
// contract, or its default sizes where the plan has none.
Status OwnProblems(const kernels::Variant& v, const RunPlan& plan,
                   std::vector<kernels::Problem>* out) {
  namespace ku = ::ablation::kernels::user;
  ku::Manifest m;
  if (!v.code ||
      !ku::ParseManifest(v.code->manifest, v.name, ku::ManifestLimits::Unbounded(), &m).empty() ||
      !m.general)
    return InvalidArgument(v.name + ": its contract cannot be read");
  std::vector<std::string> sizes = plan.sizes;
  if (sizes.empty()) sizes.push_back("");  // the defaults
  for (size_t i = 0; i < sizes.size(); ++i) {
    ku::Sizes parsed;
    if (std::string why = ku::ParseSizes(sizes[i], *m.general, &parsed); !why.empty())
      return InvalidArgument("sizes[" + std::to_string(i) + "]: " + v.name + ": " + why);
    const kernels::Problem p = ku::ProblemOfSizes(*m.general, plan.dtype, parsed);
    if (std::none_of(out->begin(), out->end(), [&](const kernels::Problem& q) {
          return q.m == p.m && q.n == p.n && q.k == p.k;
        }))
      out->push_back(p);
  }
  return Status::Ok();
}

Status CheckCanImplement(RunPlan* plan) {
  for (const auto* v : plan->variants) {
    if (!v->own_contract) continue;
    std::vector<kernels::Problem> problems;
    if (Status st = OwnProblems(*v, *plan, &problems); !st.ok()) return st;
    for (const kernels::Problem& p : problems) {
      if (std::string why = v->can_implement ? v->can_implement(p) : ""; !why.empty())
        return InvalidArgument("sizes: " + v->name + " cannot run: " + why);
      plan->items.push_back({v, p});
    }
  }
  for (const auto& p : plan->problems) {
    for (const auto* v : plan->variants) {
      if (v->own_contract) continue;
      std::string why = v->can_implement ? v->can_implement(p) : "";
      if (!why.empty()) {
        return InvalidArgument("shapes: " + v->name + " cannot run " + ShapeText(p) + ": " + why);
      }
      plan->items.push_back({v, p});
    }
  }
  return Status::Ok();
}

}  // namespace

std::string ArchRefusal(const kernels::Variant& v, const DeviceLimits& device) {
  if (!device.known || device.compute_capability.empty()) return "";
  const std::string arch = v.Param("arch");
  if (arch.rfind("sm_", 0) != 0) return "";
  std::string digits;
  for (char c : arch.substr(3))
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  if (digits.size() < 2) return "";
  const std::string need = digits.substr(0, digits.size() - 1) + "." + digits.back();
  if (need != device.compute_capability) {
    return v.name + " runs on compute capability " + need + " only (built for " +
           std::string(arch) + "); this GPU is " + device.compute_capability;
  }
  return "";
}

Status ApplyRounds(int requested, int default_rounds, uint64_t order_seed, RunPlan* plan) {
  if (requested < 0 || requested > kMaxRounds)
    return InvalidArgument("rounds: " + std::to_string(requested) + " is not in 0.." +
                           std::to_string(kMaxRounds) + " (0: the default)");
  const int rounds = requested > 0 ? requested : default_rounds;
  plan->rounds = rounds;
  plan->order_seed = order_seed;
  v1::TimingOptions& t = plan->timing;
  if (t.fresh_inputs() && rounds < 2)
    return InvalidArgument(
        "timing.fresh_inputs: inputs made anew for each round need 2 or more rounds (rounds: " +
        std::to_string(rounds) + ")");
  t.set_min_seconds(t.min_seconds() / rounds);
  t.set_max_seconds(t.max_seconds() / rounds);
  t.set_min_samples((t.min_samples() + rounds - 1) / rounds);
  // Not the warm-up: it is what brings an idle GPU's clocks up, however many rounds follow. Its
  // cost per measurement is the worker's warm-up policy's (server/worker/README.md): the full
  // warmup_seconds only where the GPU was idle, a short one where the item before kept it busy.
  return Status::Ok();
}

std::string ClockPolicyText(const ClockPolicy& policy) {
  return ClockPolicyString(policy.lock ? &policy.target : nullptr);
}

Status ParseDTypeField(const std::string& text, const std::string& field, kernels::DType* out) {
  if (text.empty()) {
    *out = kernels::DType::kBF16;
    return Status::Ok();
  }
  auto d = kernels::ParseDType(text);
  if (!d) {
    return InvalidArgument(field + ": unknown dtype '" + text +
                           "'; known: bf16, fp16, fp32, tf32, int8");
  }
  *out = *d;
  return Status::Ok();
}

int64_t RequiredDeviceBytes(const kernels::Problem& p, const DeviceLimits& device, bool verify) {
  const int64_t in = kernels::ElementBytes(p.dtype), out = kernels::OutputBytes(p.dtype);
  int64_t bytes = p.m * p.k * in + 2 * p.k * p.n * in + p.m * p.n * out;
  if (verify) bytes += p.m * p.n * out;
  bytes += 2 * device.l2_bytes;  // L2 flush buffer
  bytes += int64_t(64) << 20;    // cuBLAS workspace
  // Kernels' own scratch kept by the worker: at most 256 KiB of stream-K partial sums per CTA of
  // a one-CTA-per-SM grid (the sm90 family), sized for a 144-SM device.
  bytes += int64_t(144) << 18;
  return bytes;
}

// The regime and its knobs: the request's, over the daemon's defaults; a clock lock is the
// locked regime, and the other regimes measure the clocks as the GPU sets them.
static Status PlanRegime(const v1::RunRequest& request, const TimingDefaults& d, RunPlan* plan) {
  const v1::Regime asked = request.regime();
  if (!v1::Regime_IsValid(asked))
    return InvalidArgument("regime: " + std::to_string(int(asked)) +
                           " is not sustained, burst or locked");
  const bool lock = request.clocks().mode() == v1::CLOCK_MODE_LOCK;
  switch (asked) {
    case v1::REGIME_UNSPECIFIED:
      plan->regime = lock ? Regime::kLocked : d.regime;
      break;
    case v1::REGIME_SUSTAINED:
    case v1::REGIME_BURST:
      if (lock) {
        return InvalidArgument(std::string("regime: ") +
                               (asked == v1::REGIME_BURST ? "burst" : "sustained") +
                               " measures the clocks as the GPU sets them; a clock lock "
                               "(clocks.mode lock) is the locked regime");
      }
      plan->regime = asked == v1::REGIME_BURST ? Regime::kBurst : Regime::kSustained;
      break;
    default:
      plan->regime = Regime::kLocked;
      break;
  }
  // A locked run with the default regime takes the lock's regime, never the default's.
  if (lock) plan->regime = Regime::kLocked;
  RegimeParams& p = plan->regime_params;
  p = d.regime_params;
  const v1::TimingOptions& t = request.timing();
  if (t.window_seconds() > 0) p.window_seconds = t.window_seconds();
  if (t.settle_max_seconds() > 0) p.settle_max_seconds = t.settle_max_seconds();
  if (t.burst_seconds() > 0) p.burst_seconds = t.burst_seconds();
  if (t.solo_seconds() > 0) p.solo_seconds = t.solo_seconds();
  plan->timing.set_window_seconds(p.window_seconds);
  plan->timing.set_settle_max_seconds(p.settle_max_seconds);
  plan->timing.set_burst_seconds(p.burst_seconds);
  plan->timing.set_solo_seconds(p.solo_seconds);
  plan->paired = !request.unpaired();
  return Status::Ok();
}

std::vector<std::vector<int>> WindowGroups(const RunPlan& plan) {
  std::vector<std::vector<int>> groups;
  std::vector<kernels::Problem> keys;
  for (size_t i = 0; i < plan.items.size(); ++i) {
    const kernels::Problem& p = plan.items[i].problem;
    size_t g = keys.size();
    if (plan.paired) {
      for (size_t j = 0; j < keys.size(); ++j) {
        if (keys[j].dtype == p.dtype && keys[j].m == p.m && keys[j].n == p.n && keys[j].k == p.k) {
          g = j;
          break;
        }
      }
    }
    if (g == keys.size()) {
      keys.push_back(p);
      groups.emplace_back();
    }
    groups[g].push_back(int(i));
  }
  return groups;
}

v1::Regime ToProto(Regime r) {
  switch (r) {
    case Regime::kSustained:
      return v1::REGIME_SUSTAINED;
    case Regime::kBurst:
      return v1::REGIME_BURST;
    case Regime::kLocked:
      return v1::REGIME_LOCKED;
  }
  return v1::REGIME_UNSPECIFIED;
}

// What run and verify requests share: dtype, variants, shapes and device, in that order.
template <typename Request>
static Status PlanSelection(const Request& request, const kernels::Registry& registry,
                            RunPlan* plan) {
  Status st = ParseDTypeField(request.dtype(), "dtype", &plan->dtype);
  if (!st.ok()) return st;
  if (!(st = ResolveVariants(request.variants(), registry, plan->dtype, &plan->variants)).ok())
    return st;
  const bool gemms = std::any_of(plan->variants.begin(), plan->variants.end(),
                                 [](const kernels::Variant* v) { return !v->own_contract; });
  if ((gemms || !request.shapes().empty()) &&
      !(st = CheckShapes(request.shapes(), plan->dtype, &plan->problems)).ok())
    return st;
  plan->sizes.assign(request.sizes().begin(), request.sizes().end());
  if (request.device() < 0) return InvalidArgument("device: must be 0 or more");
  plan->device = request.device();
  return Status::Ok();
}

Status PlanRun(const v1::RunRequest& request, const kernels::Registry& registry,
               const DeviceLimits& device, const TimingDefaults& d, RunPlan* plan) {
  Status st = PlanSelection(request, registry, plan);
  if (!st.ok()) return st;
  if (!(st = CheckTags(request.tags())).ok()) return st;

  // Timing: unset fields take the defaults; set ones must make sense.
  const auto& t = request.timing();
  v1::TimingOptions& o = plan->timing;
  if (!(st = CheckTimingRanges(t)).ok()) return st;
  o.set_min_samples(t.min_samples() ? t.min_samples() : d.min_samples);
  o.set_max_samples(t.max_samples() ? t.max_samples() : d.max_samples);
  o.set_min_seconds(t.min_seconds() > 0 ? t.min_seconds() : d.min_seconds);
  o.set_max_seconds(t.max_seconds() > 0 ? t.max_seconds() : d.max_seconds);
  o.set_target_noise(t.target_noise() > 0 ? t.target_noise() : d.target_noise);
  o.set_warmup_count(t.warmup_count() ? t.warmup_count() : d.warmup_count);
  o.set_warmup_seconds(t.warmup_seconds() > 0 ? t.warmup_seconds() : d.warmup_seconds);
  o.set_hot_l2(t.hot_l2());
  o.set_flush_l2(t.flush_l2());
  o.set_no_solo(t.no_solo());
  o.set_fresh_inputs(t.fresh_inputs());
  if (t.hot_l2() && t.flush_l2())
    return InvalidArgument("timing.flush_l2: a flushed L2 is cold; it cannot go with hot_l2");
  if (!(t.low_clock_fraction() >= 0 && t.low_clock_fraction() < 1))
    return InvalidArgument("timing.low_clock_fraction: must be in [0, 1), 0 for the default");
  o.set_low_clock_fraction(t.low_clock_fraction() > 0 ? t.low_clock_fraction()
                                                      : kDefaultLowClockFraction);
  if (o.min_samples() > o.max_samples())
    return InvalidArgument("timing.min_samples: more than timing.max_samples");
  if (o.max_seconds() < o.min_seconds())
    return InvalidArgument("timing.max_seconds: less than timing.min_seconds");
  if (o.target_noise() >= 1) return InvalidArgument("timing.target_noise: must be below 1");
  if (o.max_seconds() > 3600) return InvalidArgument("timing.max_seconds: at most 3600");

  const v1::ClockMode mode = request.clocks().mode();
  if (!v1::ClockMode_IsValid(mode))
    return InvalidArgument("clocks.mode: " + std::to_string(int(mode)) +
                           " is neither observe nor lock");
  if (!(st = PlanRegime(request, d, plan)).ok()) return st;
  plan->clocks.lock = mode == v1::CLOCK_MODE_LOCK || plan->regime == Regime::kLocked;
  if (plan->clocks.lock) {
    plan->clocks.sm_spec = request.clocks().sm_mhz();
    plan->clocks.mem_spec = request.clocks().mem_mhz();
    if (plan->clocks.sm_spec.empty() && plan->clocks.mem_spec.empty()) {
      if (mode == v1::CLOCK_MODE_LOCK)
        return InvalidArgument(
            "clocks: lock needs clocks.sm_mhz and/or clocks.mem_mhz (MHz, base or max)");
      // regime locked without values: the SM clock at base, as nvbench locks it.
      plan->clocks.sm_spec = "base";
    }
  } else if (!request.clocks().sm_mhz().empty() || !request.clocks().mem_mhz().empty()) {
    return InvalidArgument("clocks.sm_mhz: clock values only make sense with clocks.mode=lock");
  }
  plan->verify = request.verify();

  if (!(st = CheckCanImplement(plan)).ok()) return st;
  return CheckFits(*plan, device, plan->verify);
}

Status PlanVerify(const v1::VerifyRequest& request, const kernels::Registry& registry,
                  const DeviceLimits& device, RunPlan* plan) {
  Status st = PlanSelection(request, registry, plan);
  if (!st.ok()) return st;
  if (!(st = CheckTags(request.tags())).ok()) return st;
  plan->verify = true;
  plan->reference = request.reference();
  if (!v1::Reference_IsValid(plan->reference))
    return InvalidArgument("reference: unknown reference " + std::to_string(int(plan->reference)));
  if (plan->reference == v1::REFERENCE_VARIANT) {
    const std::string& name = request.reference_variant();
    if (name.empty())
      return InvalidArgument("reference_variant: name the variant to check against");
    std::vector<const kernels::Variant*> ref;
    if (!(st = Resolve(registry, name, "reference_variant", &ref)).ok()) return st;
    if (ref.size() != 1)
      return InvalidArgument("reference_variant: '" + name + "' must name exactly one variant");
    if (!ref[0]->Supports(plan->dtype))
      return InvalidArgument("reference_variant: " + ref[0]->name + " has no " +
                             std::string(kernels::ToString(plan->dtype)) + " kernel");
    plan->reference_variant = ref[0]->name;
  } else if (!request.reference_variant().empty()) {
    return InvalidArgument("reference_variant: only with reference REFERENCE_VARIANT");
  }
  for (const auto& p : plan->problems) {
    if (plan->reference == v1::REFERENCE_CPU && Work(p) > kCpuReferenceMaxWork) {
      return InvalidArgument("reference: the CPU reference is limited to M*N*K <= 2^33 (" +
                             ShapeText(p) + " is larger); use cublas or gpu");
    }
  }
  if (!(st = CheckCanImplement(plan)).ok()) return st;
  return CheckFits(*plan, device, true);
}

Status ApplyProfileRequest(const v1::RunRequest& request, RunPlan* plan) {
  plan->profile = request.profile();
  plan->profile_metrics.assign(request.profile_metrics().begin(), request.profile_metrics().end());
  if (!plan->profile) {
    if (!plan->profile_metrics.empty())
      return InvalidArgument("profile_metrics: given without profile");
    return Status::Ok();
  }
  // The architecture is known when the item runs; the words are checked now, against sm_90's
  // names (every concept has one there).
  std::vector<CounterSelection> unused;
  return SelectCounters(plan->profile_metrics, "sm_90", &unused);
}

}  // namespace ablation::core
