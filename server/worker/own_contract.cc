#include "server/worker/own_contract.h"

#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "server/worker/own_fill.h"
#include "server/worker/own_reference.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;
namespace ku = ::ablation::kernels::user;

struct OwnKernel::Arena {
  k::Problem problem;
  ku::Sizes sizes;
  ku::BufferPlan plan;
  void* base = nullptr;
  ku::LaunchGeometry entry, reference;
  ku::ArgumentBlock args;
  std::vector<void*> params;  // into args.bytes: cudaLaunchKernel's
  ~Arena() {
    if (base != nullptr) cudaFree(base);
  }
};

namespace {

/// The seed of the timing arena's first values (a batch's Refresh replaces them).
constexpr uint64_t kTimingSeed = 0x6F776E5F74696D65ull;

std::string Cuda(const std::string& what, cudaError_t e) {
  if (e == cudaSuccess) return "";
  cudaGetLastError();  // a launch error is not sticky: clear it for the next call
  return what + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
}

bool Written(ku::TensorRole r) { return r != ku::TensorRole::kInput; }

uint64_t TensorSeed(uint64_t seed, size_t i) {
  return seed ^ (uint64_t(i + 1) * 0x9E3779B97F4A7C15ull);
}

int FillKind(ku::Fill::Kind kind) {
  switch (kind) {
    case ku::Fill::Kind::kNormal:
      return 0;
    case ku::Fill::Kind::kUniform:
      return 1;
    case ku::Fill::Kind::kIntegers:
      return 2;
  }
  return 0;
}

bool SameProblem(const k::Problem& a, const k::Problem& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.dtype == b.dtype;
}

std::vector<uint8_t> Slice(const std::vector<uint8_t>& arena, const ku::TensorBuffer& t) {
  return {arena.begin() + t.offset, arena.begin() + t.offset + t.bytes};
}

/// Every output and inout of `mine` (an arena's bytes) against the reference's (`theirs`) within
/// the contract's tolerance, counted into *check; its detail, where it has none yet, names the
/// first element outside.
void CompareOutputs(const ku::GeneralContract& c, const ku::BufferPlan& plan,
                    const ku::Sizes& sizes, const std::vector<uint8_t>& mine,
                    const std::vector<uint8_t>& theirs, k::OwnCheck* check) {
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    const ku::TensorSpec& t = c.tensors[i];
    if (!Written(t.role)) continue;
    const ku::TensorBuffer& b = plan.tensors[i];
    ku::OutputStats stats;
    const std::string first = ku::CompareOutput(t, sizes, t.dtype, Slice(mine, b), Slice(theirs, b),
                                                c.reference.tolerance, &stats);
    check->elements += stats.elements;
    check->mismatches += stats.mismatches;
    check->max_abs_error = std::max(check->max_abs_error, stats.max_abs_error);
    check->max_rel_error = std::max(check->max_rel_error, stats.max_rel_error);
    if (check->detail.empty() && !first.empty()) check->detail = first;
  }
  check->passed = check->detail.empty() && check->mismatches == 0;
}

}  // namespace

OwnKernel::OwnKernel(std::shared_ptr<const ku::Manifest> manifest, ku::KnobSet knobs,
                     const void* entry, const void* reference)
    : manifest_(std::move(manifest)),
      knobs_(std::move(knobs)),
      entry_(entry),
      reference_(reference) {}

OwnKernel::~OwnKernel() {
  if (check_done_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(check_done_));
}

std::string OwnKernel::FillInputs(Arena& a, uint64_t seed, void* stream) {
  const ku::GeneralContract& c = *manifest_->general;
  char* base = static_cast<char*>(a.base);
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    const ku::TensorSpec& t = c.tensors[i];
    const ku::TensorBuffer& b = a.plan.tensors[i];
    if (t.role == ku::TensorRole::kOutput) continue;
    if (std::string err = FillOwnTensor(base + b.offset, b.elements, t.dtype, FillKind(t.fill.kind),
                                        t.fill.a, t.fill.b, TensorSeed(seed, i), stream);
        !err.empty())
      return "tensor " + t.name + ": " + err;
  }
  return "";
}

std::string OwnKernel::Layout(const k::Problem& p, Arena* out) {
  const ku::GeneralContract& c = *manifest_->general;
  out->problem = p;
  std::string err;
  if (!(err = ku::SizesOfProblem(c, p, &out->sizes)).empty() ||
      !(err = ku::PlanBuffers(c, out->sizes, ku::kMaxOwnTensorBytes, &out->plan)).empty() ||
      !(err = ku::Plan(*manifest_, knobs_, p, &out->entry)).empty() ||
      !(err = ku::PlanReference(c, out->sizes, &out->reference)).empty())
    return err;
  const int64_t bytes = out->plan.arena_bytes;
  if (!(err = Cuda("allocating the tensors (" + std::to_string(bytes >> 20) + " MiB)",
                   cudaMalloc(&out->base, size_t(bytes))))
           .empty())
    return err;
  out->args = ku::PackArguments(c, out->sizes, out->plan, uint64_t(uintptr_t(out->base)));
  out->params.clear();
  for (size_t off : out->args.offsets) out->params.push_back(out->args.bytes.data() + off);
  return "";
}

std::string OwnKernel::Poison(Arena& a, void* stream) {
  const ku::GeneralContract& c = *manifest_->general;
  char* base = static_cast<char*>(a.base);
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    if (c.tensors[i].role != ku::TensorRole::kOutput) continue;
    const ku::TensorBuffer& b = a.plan.tensors[i];
    if (std::string err = Cuda("poisoning output " + b.name,
                               cudaMemsetAsync(base + b.offset, 0xFF, size_t(b.bytes),
                                               static_cast<cudaStream_t>(stream)));
        !err.empty())
      return err;
  }
  return "";
}

std::string OwnKernel::Prepare(const k::Problem& p, uint64_t seed, void* stream, Arena* out) {
  std::string err = Layout(p, out);
  if (!err.empty()) return err;
  // Canaries everywhere first; the inputs over them; the outputs poisoned (NaN in every float
  // type), so that an element the kernel never writes shows.
  uint8_t pattern[256];
  for (int i = 0; i < 256; ++i) pattern[i] = ku::CanaryByte(i);
  if (!(err = FillPattern(out->base, out->plan.arena_bytes, pattern, stream)).empty() ||
      !(err = FillInputs(*out, seed, stream)).empty())
    return err;
  return Poison(*out, stream);
}

std::string OwnKernel::LaunchOn(const Arena& a, bool reference, void* stream) {
  const ku::GeneralContract& c = *manifest_->general;
  if (reference && c.reference.builtin != ku::BuiltinReference::kNone) {
    ku::BuiltinPlan b;
    if (std::string err = ku::PlanBuiltinReference(c, a.sizes, &b); !err.empty()) return err;
    const char* base = static_cast<const char*>(a.base);
    const auto at = [&](int i) {
      return i < 0 ? RefTensor{}
                   : RefTensor{base + a.plan.tensors[size_t(i)].offset, c.tensors[size_t(i)].dtype};
    };
    return LaunchBuiltinReference(c.reference.builtin, at(b.input), at(b.output), at(b.weight),
                                  b.rows, b.cols, c.reference.eps, stream);
  }
  const ku::LaunchGeometry& g = reference ? a.reference : a.entry;
  const void* fn = reference ? reference_ : entry_;
  int& opt_in = smem_opt_in_[reference ? 1 : 0];
  if (g.smem_bytes > opt_in) {
    if (std::string err =
            Cuda("allowing " + std::to_string(g.smem_bytes) + " bytes of shared memory",
                 cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(g.smem_bytes)));
        !err.empty())
      return err;
    opt_in = int(g.smem_bytes);
  }
  return Cuda("launching " + (reference ? ku::ReferenceName(c) : manifest_->entry),
              cudaLaunchKernel(fn, dim3(unsigned(g.grid_x), unsigned(g.grid_y), unsigned(g.grid_z)),
                               dim3(unsigned(g.block), unsigned(g.block_y), unsigned(g.block_z)),
                               const_cast<void**>(a.params.data()), size_t(g.smem_bytes),
                               static_cast<cudaStream_t>(stream)));
}

std::string OwnKernel::Launch(const k::GemmArgs& args) {
  if (!timing_[0] || !SameProblem(timing_[0]->problem, args.problem)) {
    for (int i = 0; i < 2; ++i) {
      timing_[i] = std::make_unique<Arena>();
      if (std::string err =
              Prepare(args.problem, kTimingSeed + uint64_t(i), args.stream, timing_[i].get());
          !err.empty()) {
        timing_[0].reset();
        timing_[1].reset();
        return err;
      }
    }
  }
  // The two arenas in turn: no launch finds the inputs (values or addresses) of the one before.
  last_ = 1 - last_;
  return LaunchOn(*timing_[last_], false, args.stream);
}

std::string OwnKernel::Refresh(uint64_t seed, void* stream) {
  for (int i = 0; i < 2; ++i) {
    if (!timing_[i]) continue;
    if (std::string err = FillInputs(*timing_[i], seed ^ (uint64_t(i + 1) << 56), stream);
        !err.empty())
      return err;
  }
  return "";
}

std::string OwnKernel::EnqueueTimedCheck(void* stream) {
  checking_ = false;
  if (!timing_[last_]) return "";
  const Arena& timing = *timing_[last_];
  const ku::GeneralContract& c = *manifest_->general;
  // An inout tensor holds what many launches made of it: no single reference launch gives that.
  for (const ku::TensorSpec& t : c.tensors)
    if (t.role == ku::TensorRole::kInOut) return "";
  const auto s = static_cast<cudaStream_t>(stream);
  std::string err;
  for (std::unique_ptr<Arena>* a : {&kept_, &checked_}) {
    if (*a && SameProblem((*a)->problem, timing.problem)) continue;
    *a = std::make_unique<Arena>();
    if (!(err = Layout(timing.problem, a->get())).empty()) {
      a->reset();
      return err;
    }
  }
  const size_t bytes = size_t(timing.plan.arena_bytes);
  if (!(err = Cuda("keeping a timed launch's outputs",
                   cudaMemcpyAsync(kept_->base, timing.base, bytes, cudaMemcpyDeviceToDevice, s)))
           .empty() ||
      !(err =
            Cuda("copying a timed launch's inputs",
                 cudaMemcpyAsync(checked_->base, timing.base, bytes, cudaMemcpyDeviceToDevice, s)))
           .empty() ||
      !(err = Poison(*checked_, stream)).empty() ||
      !(err = LaunchOn(*checked_, true, stream)).empty())
    return err;
  if (check_done_ == nullptr &&
      !(err = Cuda("creating an event",
                   cudaEventCreateWithFlags(reinterpret_cast<cudaEvent_t*>(&check_done_),
                                            cudaEventDisableTiming)))
           .empty())
    return err;
  if (!(err = Cuda("recording a check", cudaEventRecord(static_cast<cudaEvent_t>(check_done_), s)))
           .empty())
    return err;
  checking_ = true;
  return "";
}

std::string OwnKernel::JudgeTimedCheck(k::OwnCheck* out) {
  *out = k::OwnCheck{};
  out->passed = true;
  if (!checking_) return "";
  checking_ = false;
  const ku::GeneralContract& c = *manifest_->general;
  std::string err = Cuda("running the reference on a timed launch's inputs",
                         cudaEventSynchronize(static_cast<cudaEvent_t>(check_done_)));
  if (!err.empty()) return err;
  const int64_t bytes = kept_->plan.arena_bytes;
  std::vector<uint8_t> mine(static_cast<size_t>(bytes)), theirs(mine.size());
  if (!(err = Cuda("copying a timed launch's outputs back",
                   cudaMemcpy(mine.data(), kept_->base, size_t(bytes), cudaMemcpyDeviceToHost)))
           .empty() ||
      !(err =
            Cuda("copying the reference's outputs back",
                 cudaMemcpy(theirs.data(), checked_->base, size_t(bytes), cudaMemcpyDeviceToHost)))
           .empty())
    return err;
  // The canaries as they were written, against the timed arena as its launches left it: the
  // bytes outside every tensor as CanaryByte wrote them, the tensors as they are.
  std::vector<uint8_t> expected = mine;
  int64_t at = 0;
  const auto canaries = [&](int64_t from, int64_t to) {
    for (int64_t i = from; i < to; ++i) expected[size_t(i)] = ku::CanaryByte(i);
  };
  for (const ku::TensorBuffer& t : kept_->plan.tensors) {
    canaries(at, t.offset);
    at = t.offset + t.bytes;
  }
  canaries(at, bytes);
  out->detail = ku::ForeignWrites(c, kept_->plan, expected, mine);
  CompareOutputs(c, kept_->plan, kept_->sizes, mine, theirs, out);
  return "";
}

std::string OwnCheckText(const k::OwnCheck& check) {
  return check.detail + " (" + std::to_string(check.mismatches) + " of " +
         std::to_string(check.elements) + " output elements outside the tolerance)";
}

std::string OwnKernel::Verify(const k::Problem& p, void* stream, uint64_t seed, k::OwnCheck* out) {
  const ku::GeneralContract& c = *manifest_->general;
  Arena mine, ref;
  std::string err = Prepare(p, seed, stream, &mine);
  if (!err.empty()) return err;
  const int64_t bytes = mine.plan.arena_bytes;
  if (bytes > kMaxVerifiedArenaBytes)
    return "its tensors at " + ku::FormatSizes(c, mine.sizes) + " take " +
           std::to_string(bytes >> 20) + " MiB, more than the " +
           std::to_string(kMaxVerifiedArenaBytes >> 20) + " MiB a verification holds";
  if (!(err = Prepare(p, seed, stream, &ref)).empty()) return "reference: " + err;
  const auto s = static_cast<cudaStream_t>(stream);
  std::vector<uint8_t> before(static_cast<size_t>(bytes)), after(before.size()),
      ref_after(before.size());
  if (!(err = Cuda("preparing the inputs", cudaStreamSynchronize(s))).empty() ||
      !(err = Cuda("copying the inputs back",
                   cudaMemcpy(before.data(), mine.base, size_t(bytes), cudaMemcpyDeviceToHost)))
           .empty())
    return err;
  if (!(err = LaunchOn(mine, false, stream)).empty() ||
      !(err = Cuda("running " + manifest_->entry, cudaStreamSynchronize(s))).empty())
    return err;
  if (!(err = LaunchOn(ref, true, stream)).empty() ||
      !(err = Cuda("running " + ku::ReferenceName(c), cudaStreamSynchronize(s))).empty())
    return "reference: " + err;
  if (!(err = Cuda("copying the outputs back",
                   cudaMemcpy(after.data(), mine.base, size_t(bytes), cudaMemcpyDeviceToHost)))
           .empty() ||
      !(err = Cuda("copying the reference's outputs back",
                   cudaMemcpy(ref_after.data(), ref.base, size_t(bytes), cudaMemcpyDeviceToHost)))
           .empty())
    return err;
  if (std::string foreign = ku::ForeignWrites(c, ref.plan, before, ref_after); !foreign.empty())
    return "reference: " + ku::ReferenceName(c) + " made " + foreign;
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    const ku::TensorSpec& t = c.tensors[i];
    if (t.role != ku::TensorRole::kOutput) continue;
    if (const int64_t n =
            ku::Unwritten(Slice(ref_after, mine.plan.tensors[i]), k::ElementBytes(t.dtype));
        n > 0)
      return "reference: " + ku::ReferenceName(c) + " left " + std::to_string(n) + " elements of " +
             t.name + " unwritten";
  }
  k::OwnCheck check;
  check.detail = ku::ForeignWrites(c, mine.plan, before, after);
  CompareOutputs(c, mine.plan, mine.sizes, after, ref_after, &check);
  *out = check;
  return "";
}

}  // namespace ablation::worker
