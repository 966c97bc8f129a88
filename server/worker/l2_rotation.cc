#include "server/worker/l2_rotation.h"

#include "server/worker/diagnostics.h"
#include "server/worker/worker.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;

namespace {

/// cudaMalloc's own alignment: every kernel's alignment checks (16-byte vectors, cp.async) see
/// the copies as they see cudaMalloc'd inputs.
constexpr size_t kAlign = 256;

size_t AlignUp(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

}  // namespace

std::string MakeInputSets(Device& d, const Ready& r, const Buffers& b, const k::GemmArgs& base,
                          uint64_t seed, const SamplingOptions& o, L2Plan* plan, InputSets* sets) {
  const k::Problem& p = r.problem;
  const size_t in_bytes = size_t(k::ElementBytes(p.dtype));
  const size_t a_count = size_t(p.m * p.k), b_count = size_t(p.k * p.n);
  const size_t a_pitch = AlignUp(a_count * in_bytes), b_pitch = AlignUp(b_count * in_bytes);
  const size_t stride = a_pitch + b_pitch;
  size_t free_bytes = 0, total_bytes = 0;
  std::string err = d.Check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (!err.empty()) return err;
  *plan =
      PlanL2(o.hot_l2, o.flush_l2, double(stride), double(d.prop.l2CacheSize), double(free_bytes));
  sets->args.assign(1, base);
  if (plan->method != L2Method::kRotate) return "";

  const int64_t extra = plan->copies - 1;
  if (!(err = sets->copies.Allocate(size_t(extra) * stride)).empty()) {
    // Not the measurement's failure: the flush makes the L2 just as cold, at a higher wall cost.
    cudaGetLastError();
    plan->method = L2Method::kFlush;
    plan->note = "allocating " + std::to_string(extra) + " copies of the inputs for the L2 " +
                 "rotation failed (" + err + "): the L2 is flushed before each sample";
    plan->copies = 1;
    return "";
  }
  const InputSeeds seeds = SeedsFor(seed);
  const bool nk = r.variant->b_layout == k::BLayout::kNK;
  auto* pool = static_cast<unsigned char*>(sets->copies.data());
  for (int64_t i = 0; i < extra; ++i) {
    void* a = pool + size_t(i) * stride;
    void* bb = pool + size_t(i) * stride + a_pitch;
    err = k::FillRandom(a, a_count, p.dtype, seeds.a, d.stream);
    if (err.empty()) {
      err = nk ? k::Transpose(b.b_kn.data(), bb, p.k, p.n, p.dtype, d.stream)
               : k::FillRandom(bb, b_count, p.dtype, seeds.b, d.stream);
    }
    if (!err.empty()) return d.Failed("filling the inputs' copies for the L2 rotation: " + err);
    k::GemmArgs args = base;
    args.a = a;
    args.b = bb;
    sets->args.push_back(args);
  }
  return d.Check(cudaStreamSynchronize(d.stream), "preparing the L2 rotation's inputs");
}

}  // namespace ablation::worker
