#include "server/worker/launch.h"

#include "kernels/common/buffers.h"
#include "server/worker/diagnostics.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;

k::GemmArgs ArgsFor(const Device& d, const Ready& r, const ProblemInputs& in, void* c) {
  k::GemmArgs args;
  args.problem = r.problem;
  args.a = in.a;
  args.b = r.variant->b_layout == k::BLayout::kNK ? in.b_nk : in.b_kn;
  args.c = c;
  args.stream = d.stream;
  args.cublas = d.cublas;
  args.cublaslt = d.cublaslt;
  args.workspace = d.workspace.data();
  args.workspace_bytes = d.workspace.bytes();
  if (r.library_algo) args.library_algo = r.library_algo->data();
  if (r.problem.dtype == k::DType::kFP8) {
    // On failure the scales stay null and the launcher refuses with its own sentence.
    (void)k::Fp8ScalePointers(&args.scale_a, &args.scale_b);
  }
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
