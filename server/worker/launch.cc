#include "server/worker/launch.h"

#include <cinttypes>
#include <cstdio>

#include "server/worker/diagnostics.h"
#include "server/worker/worker.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;

namespace {

/// Headroom left free when checking that a problem fits: cuBLAS and the kernels' launchers may
/// allocate a little themselves, and the driver needs some for the launch itself.
constexpr size_t kMemoryHeadroomBytes = 256u << 20;

double MiB(double bytes) { return bytes / double(1u << 20); }

// Asked before allocating, so that a problem that cannot fit is refused with the numbers rather
// than failing half-way with an allocation error.
std::string CheckMemory(const k::Problem& p, bool need_nk, int outputs) {
  const double in_bytes = double(k::ElementBytes(p.dtype));
  const double a = double(p.m) * double(p.k) * in_bytes;
  const double b = double(p.k) * double(p.n) * in_bytes * (need_nk ? 2 : 1);
  const double c = double(p.m) * double(p.n) * double(k::OutputBytes(p.dtype)) * outputs;
  const double need = a + b + c;
  size_t free_bytes = 0, total_bytes = 0;
  cudaError_t e = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (e != cudaSuccess) return "cudaMemGetInfo: " + CudaText(e);
  if (need + double(kMemoryHeadroomBytes) > double(free_bytes)) {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "problem does not fit in device memory: %s %" PRId64 "x%" PRId64 "x%" PRId64
                  " needs %.1f MiB (A %.1f, B %.1f, C %.1f) plus %.0f MiB headroom; %.1f MiB free "
                  "of %.1f MiB",
                  std::string(k::ToString(p.dtype)).c_str(), p.m, p.n, p.k, MiB(need), MiB(a),
                  MiB(b), MiB(c), MiB(kMemoryHeadroomBytes), MiB(double(free_bytes)),
                  MiB(double(total_bytes)));
    return buf;
  }
  return "";
}

}  // namespace

InputSeeds SeedsFor(uint64_t seed) {
  // Different constants so A and B never share a random stream even when seed is 0.
  return {seed ^ 0x243f6a8885a308d3ull, seed ^ 0x9e3779b97f4a7c15ull};
}

std::string MakeInputs(Device& d, const k::Problem& p, uint64_t seed, bool need_nk, int outputs,
                       Buffers* b) {
  std::string err = CheckMemory(p, need_nk, outputs);
  if (!err.empty()) return err;
  const size_t in_bytes = size_t(k::ElementBytes(p.dtype));
  const size_t out_bytes = size_t(k::OutputBytes(p.dtype));
  const InputSeeds seeds = SeedsFor(seed);
  auto fail = [&](const std::string& what, const std::string& e) {
    return d.Failed(what + ": " + e);
  };
  if (!(err = b->a.Allocate(size_t(p.m * p.k) * in_bytes)).empty()) {
    return fail("allocating A", err);
  }
  if (!(err = b->b_kn.Allocate(size_t(p.k * p.n) * in_bytes)).empty()) {
    return fail("allocating B", err);
  }
  if (!(err = b->c.Allocate(size_t(p.m * p.n) * out_bytes)).empty()) {
    return fail("allocating C", err);
  }
  if (outputs > 1 && !(err = b->c_ref.Allocate(size_t(p.m * p.n) * out_bytes)).empty()) {
    return fail("allocating the reference output", err);
  }
  if (!(err = k::FillRandom(b->a.data(), size_t(p.m * p.k), p.dtype, seeds.a, d.stream)).empty()) {
    return fail("filling A", err);
  }
  if (!(err = k::FillRandom(b->b_kn.data(), size_t(p.k * p.n), p.dtype, seeds.b, d.stream))
           .empty()) {
    return fail("filling B", err);
  }
  if (need_nk) {
    if (!(err = b->b_nk.Allocate(size_t(p.k * p.n) * in_bytes)).empty()) {
      return fail("allocating B (N x K)", err);
    }
    if (!(err = k::Transpose(b->b_kn.data(), b->b_nk.data(), p.k, p.n, p.dtype, d.stream))
             .empty()) {
      return fail("transposing B", err);
    }
  }
  // Outputs start poisoned, so that a variant that writes nothing never looks plausible.
  if (!(err = k::Poison(b->c.data(), size_t(p.m * p.n), p.dtype, d.stream)).empty()) {
    return fail("poisoning C", err);
  }
  return d.Check(cudaStreamSynchronize(d.stream), "preparing inputs");
}

k::GemmArgs ArgsFor(const Device& d, const Ready& r, const Buffers& b, void* c) {
  k::GemmArgs args;
  args.problem = r.problem;
  args.a = b.a.data();
  args.b = r.variant->b_layout == k::BLayout::kNK ? b.b_nk.data() : b.b_kn.data();
  args.c = c;
  args.stream = d.stream;
  args.cublas = d.cublas;
  args.cublaslt = d.cublaslt;
  args.workspace = d.workspace.data();
  args.workspace_bytes = d.workspace.bytes();
  return args;
}

std::string LaunchChecked(Device& d, const Ready& r, const k::GemmArgs& args) {
  std::string err = r.variant->launch(args);
  if (!err.empty()) return d.Failed("launching " + r.variant->name + ": " + err);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return d.Failed("launching " + r.variant->name + ": " + CudaText(e));
  return "";
}

}  // namespace ablation::worker
