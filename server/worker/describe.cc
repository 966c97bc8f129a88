#include "server/worker/describe.h"

#include <unistd.h>

#include <optional>

#include "kernels/cublas/cublas_lt.h"
#include "kernels/user/manifest.h"
#include "server/worker/diagnostics.h"
#include "server/worker/library_choice.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;

std::string RunDescribe(const Device& d, const Resident* res, const k::Registry& registry,
                        const ::ablation::worker::v1::DescribeTask& task,
                        ::ablation::worker::v1::DescribeResult* result) {
  // Resolve's checks of the problem do not apply (the shape, when given, only picks the build),
  // only those of the name and dtype.
  const k::Variant* v = registry.Find(task.variant());
  if (v == nullptr) return "unknown variant \"" + task.variant() + "\"";
  std::optional<k::DType> dtype = k::ParseDType(task.dtype());
  if (!dtype) return "unknown dtype \"" + task.dtype() + "\"";
  if (!v->Supports(*dtype)) return "variant " + v->name + " does not support " + task.dtype();
  if (v->code) {
    // A user variant runs in this executable (a profiler starts it: --profile-once --user-code)
    // from its build's cubin, whose entry is extern "C": the symbol is the entry's name. The
    // daemon disassembles the cubin it holds, not this file.
    char exe[4096];
    ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return "cannot read /proc/self/exe";
    result->set_kernel_symbol(v->code->entry);
    result->set_binary(std::string(exe, size_t(n)));
    // As the daemon compiled it.
    result->set_arch(kernels::user::CompileArch(std::to_string(d.prop.major) + "." +
                                                std::to_string(d.prop.minor)));
    return "";
  }
  k::Problem p;
  p.dtype = *dtype;
  const void* fn = nullptr;
  if (task.has_shape()) {
    p.m = task.shape().m();
    p.n = task.shape().n();
    p.k = task.shape().k();
    if (v->can_implement) {
      if (std::string e = v->can_implement(p); !e.empty()) return v->name + ": " + e;
    }
    fn = v->KernelAt(p);
    if (v->build) result->set_build(v->build(p, d.residency));
  } else {
    fn = v->kernel ? v->kernel(*dtype) : nullptr;
  }
  const char* symbol = nullptr;
  if (fn != nullptr) {
    cudaError_t e = cudaFuncGetName(&symbol, fn);
    if (e != cudaSuccess || symbol == nullptr) return "cudaFuncGetName: " + CudaText(e);
  }
  // The kernels are linked into this executable: its own path is the file to disassemble, and
  // the process a profiler starts (a library's kernels too: it launches them).
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "cannot read /proc/self/exe";
  if (fn == nullptr) {
    result->set_library(true);  // no symbol of ours: what it launches is the library's choice
    // The algorithm a _best variant launches at this shape, when this worker has chosen it: a
    // one-shot worker given it launches the same kernel the timing did.
    if (res != nullptr && task.has_shape() && k::LaunchesChosenAlgo(*v))
      result->set_library_algo(HeldLibraryAlgo(*res, v->name, p));
  } else {
    result->set_kernel_symbol(symbol);
  }
  result->set_binary(std::string(exe, size_t(n)));
  std::string arch = "sm_" + std::to_string(d.prop.major) + std::to_string(d.prop.minor);
  // A family built for an arch-specific target (the sm90 family: sm_90a) names it; cuobjdump
  // selects cubins by that exact name.
  if (const std::string named = v->Param("arch"); named.rfind(arch, 0) == 0)
    arch = std::string(named);
  result->set_arch(arch);
  return "";
}

}  // namespace ablation::worker
