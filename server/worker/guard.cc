#include "server/worker/guard.h"

#include <cmath>
#include <cstdio>

#include "kernels/reference.h"
#include "server/worker/launch.h"
#include "server/worker/timing_kernels.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;

WindowGuard::~WindowGuard() {
  if (sums_host_ != nullptr) cudaFreeHost(sums_host_);
}

namespace {

/// A user GEMM's launches are checked against cuBLAS; a kernel of its own contract is checked
/// against its own reference before timing (verify_own) and gets fresh inputs per batch
/// (refresh_own), not these checks.
bool Guarded(const k::Variant& v) { return v.code != nullptr && !v.own_contract; }

}  // namespace

std::string WindowGuard::Open(Device& d, const k::Registry& registry,
                              const std::vector<WindowMember>& members, const ProblemInputs& in,
                              uint64_t seed, uint64_t task_id) {
  active_ = false;
  for (const WindowMember& m : members) active_ = active_ || Guarded(*m.r.variant);
  if (!active_) return "";
  problem_ = members.front().r.problem;
  base_ = in;
  members_ = int(members.size());
  seed_ = seed;
  rng_.seed(seed ^ (task_id * 0x9E3779B97F4A7C15ull) ^ 0x5851F42D4C957F2Dull);
  const std::string dtype(k::ToString(problem_.dtype));
  ::ablation::v1::Shape shape;
  shape.set_m(problem_.m);
  shape.set_n(problem_.n);
  shape.set_k(problem_.k);
  if (std::string why = Resolve(registry, "cublas_" + dtype, dtype, shape, &cublas_); !why.empty())
    return "a user variant is timed only with its launches checked against cuBLAS, which cannot "
           "run here: " +
           why;
  tolerance_ = k::DefaultTolerance(problem_.dtype).rel_frobenius;
  const size_t out_bytes = size_t(problem_.m * problem_.n) * size_t(k::OutputBytes(problem_.dtype));
  std::string err;
  if (!(err = out_copy_.Allocate(out_bytes)).empty() ||
      !(err = ref_out_.Allocate(out_bytes)).empty() ||
      !(err = sums_.Allocate(size_t(kBatchSlots * members_ + 1) * 3 * sizeof(double))).empty())
    return d.Failed("allocating the checks of timed launches (" + std::to_string(out_bytes >> 20) +
                    " MiB twice): " + err);
  if (sums_host_ == nullptr &&
      cudaMallocHost(reinterpret_cast<void**>(&sums_host_),
                     size_t(kBatchSlots * members_ + 1) * 3 * sizeof(double)) != cudaSuccess)
    return d.Failed("allocating the checks' host memory");
  pending_.assign(size_t(kBatchSlots), {});
  checked_.assign(members.size(), 0);
  return "";
}

const void* WindowGuard::ReferenceB(const WindowMember& m, int64_t g) const {
  const size_t set = size_t(g % int64_t(m.sets.size()));
  if (m.r.variant->b_layout == cublas_.variant->b_layout) return m.sets[set].b;
  // Only the base inputs hold B in both layouts; a copy holds the member's.
  if (set != 0) return nullptr;
  return cublas_.variant->b_layout == k::BLayout::kNK ? base_.b_nk : base_.b_kn;
}

std::string WindowGuard::EnqueueCheck(Device& d, const WindowMember& m, int64_t g, int sums) {
  const k::GemmArgs& launched = m.sets[size_t(g % int64_t(m.sets.size()))];
  const size_t count = size_t(problem_.m * problem_.n);
  std::string err = d.Check(
      cudaMemcpyAsync(out_copy_.data(), launched.c, count * size_t(k::OutputBytes(problem_.dtype)),
                      cudaMemcpyDeviceToDevice, d.stream),
      "copying a timed launch's output");
  if (!err.empty()) return err;
  k::GemmArgs ref = launched;
  ref.b = ReferenceB(m, g);
  ref.c = ref_out_.data();
  if (!(err = LaunchChecked(d, cublas_, ref)).empty()) return "checking a timed launch: " + err;
  double* dev = static_cast<double*>(sums_.data()) + 3 * size_t(sums);
  if (!(err = EnqueueErrorSums(d.stream, out_copy_.data(), ref_out_.data(), count, problem_.dtype,
                               dev))
           .empty())
    return d.Failed(err);
  return d.Check(cudaMemcpyAsync(sums_host_ + 3 * size_t(sums), dev, 3 * sizeof(double),
                                 cudaMemcpyDeviceToHost, d.stream),
                 "copying a check's sums");
}

std::string WindowGuard::Verdict(const WindowMember& m, int64_t g, int sums) const {
  const double* s = sums_host_ + 3 * size_t(sums);
  const std::string& name = m.r.variant->name;
  char buf[512];
  if (s[2] > 0) {
    std::snprintf(buf, sizeof buf,
                  "%s: timed launch %lld left %.0f output elements unwritten or not finite "
                  "(checked against %s on the batch's own inputs)",
                  name.c_str(), (long long)g, s[2], cublas_.variant->name.c_str());
    return buf;
  }
  const double rel = s[1] > 0 ? std::sqrt(s[0] / s[1]) : (s[0] > 0 ? INFINITY : 0);
  if (!(rel <= tolerance_)) {
    std::snprintf(buf, sizeof buf,
                  "%s: the output of timed launch %lld differs from %s on the same inputs: "
                  "relative Frobenius error %.3g > %.3g. The inputs change between batches: "
                  "every launch must compute the product of its own inputs, not keep a result",
                  name.c_str(), (long long)g, cublas_.variant->name.c_str(), rel, tolerance_);
    return buf;
  }
  return "";
}

std::string WindowGuard::PreCheck(Device& d, const std::vector<WindowMember>& members,
                                  int* failed_member) {
  *failed_member = -1;
  const int sums = kBatchSlots * members_;
  for (size_t i = 0; i < members.size(); ++i) {
    const WindowMember& m = members[i];
    if (!Guarded(*m.r.variant)) continue;
    std::string err = LaunchChecked(d, m.r, m.sets.front());
    if (err.empty()) err = EnqueueCheck(d, m, 0, sums);
    if (err.empty()) err = d.Check(cudaStreamSynchronize(d.stream), "checking a launch");
    if (err.empty()) err = Verdict(m, 0, sums);
    if (!err.empty()) {
      *failed_member = int(i);
      return err;
    }
  }
  return "";
}

std::string WindowGuard::BeforeBatch(ResidentInputs& inputs,
                                     const std::vector<WindowMember>& members, int64_t batch,
                                     int slot, int64_t first, const std::vector<int>& who) {
  // Fresh values, reproducible from the task's seed and the batch's number.
  std::string err = inputs.Refresh(seed_ ^ (uint64_t(batch + 1) * 0xD1B54A32D192ED03ull));
  if (!err.empty()) return err;
  std::vector<Pending>& pending = pending_[size_t(slot)];
  pending.clear();
  for (size_t m = 0; m < members.size(); ++m) {
    if (!Guarded(*members[m].r.variant)) continue;
    std::vector<int> candidates;
    for (size_t s = 0; s < who.size(); ++s)
      if (who[s] == int(m) && ReferenceB(members[m], first + int64_t(s)) != nullptr)
        candidates.push_back(int(s));
    if (candidates.empty()) continue;
    const int s = candidates[size_t(rng_() % candidates.size())];
    pending.push_back({int(m), s, first + s, slot * members_ + int(m)});
  }
  return "";
}

std::string WindowGuard::AfterSample(Device& d, const std::vector<WindowMember>& members, int slot,
                                     int s) {
  for (const Pending& p : pending_[size_t(slot)])
    if (p.sample == s)
      if (std::string err = EnqueueCheck(d, members[size_t(p.member)], p.g, p.sums); !err.empty())
        return err;
  return "";
}

std::string WindowGuard::Judge(const std::vector<WindowMember>& members, int slot,
                               int* failed_member) {
  *failed_member = -1;
  for (const Pending& p : pending_[size_t(slot)]) {
    if (std::string why = Verdict(members[size_t(p.member)], p.g, p.sums); !why.empty()) {
      *failed_member = p.member;
      return why;
    }
    ++checked_[size_t(p.member)];
  }
  pending_[size_t(slot)].clear();
  return "";
}

}  // namespace ablation::worker
