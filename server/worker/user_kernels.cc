#include "server/worker/user_kernels.h"

#include <cuda_runtime.h>

#include <climits>

#include "kernels/user/contract_plan.h"
#include "kernels/user/manifest.h"
#include "server/worker/diagnostics.h"
#include "server/worker/own_contract.h"

namespace ablation::worker {

namespace k = ::ablation::kernels;
namespace ku = ::ablation::kernels::user;
namespace wpb = ::ablation::worker::v1;

/// One build in the context: its library, its entry, the manifest and knob set that plan its
/// launches. Never unloaded while the worker lives (a build is small; a worker restarts after
/// any fault), so that a handle kept elsewhere (the occupancy of a kernel) never dangles.
struct UserKernels::Loaded {
  std::string cubin_sha256;
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  std::shared_ptr<ku::Manifest> manifest;
  ku::KnobSet knobs;
  int smem_opt_in = 48 * 1024;  ///< the dynamic shared memory the kernel may use so far
  /// A kernel of its own contract: its tensors, launches and reference (own_contract.h).
  std::unique_ptr<OwnKernel> own;
};

UserKernels::UserKernels() = default;
UserKernels::~UserKernels() = default;

namespace {

std::string CudaError(const std::string& what, cudaError_t e) {
  cudaGetLastError();  // a load error is not sticky: clear it for the next call
  return what + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
}

/// Each parameter's bytes as the compiled kernel declares them (the runtime answers an index past
/// the last with an error).
std::vector<size_t> ParameterSizes(const void* fn) {
  std::vector<size_t> out;
  for (size_t i = 0; i < 4096; ++i) {
    size_t offset = 0, size = 0;
    if (cudaFuncGetParamInfo(fn, i, &offset, &size) != cudaSuccess) break;
    out.push_back(size);
  }
  cudaGetLastError();
  return out;
}

/// The launch of one user variant: planned from the manifest at the problem, then the contract's
/// arguments (A, B, C, M, N, K) on the worker's stream. Nothing else launches user code.
std::string LaunchUser(UserKernels::Loaded* self, const std::string& name, const k::GemmArgs& args);

}  // namespace

std::string UserKernels::Load(const google::protobuf::RepeatedPtrField<wpb::UserCode>& codes,
                              k::Registry& registry) {
  for (const wpb::UserCode& c : codes) {
    auto it = by_variant_.find(c.variant());
    if (it != by_variant_.end() && it->second->cubin_sha256 == c.cubin_sha256() &&
        registry.Find(c.variant()) != nullptr)
      continue;
    auto loaded = std::make_shared<Loaded>();
    loaded->cubin_sha256 = c.cubin_sha256();
    loaded->manifest = std::make_shared<ku::Manifest>();
    // The daemon accepted the manifest under its limits; here it is only read again.
    const ku::ManifestLimits unbounded = ku::ManifestLimits::Unbounded();
    if (std::string why =
            ku::ParseManifest(c.manifest(), c.variant(), unbounded, loaded->manifest.get());
        !why.empty())
      return "user variant " + c.variant() + ": its manifest: " + why;
    if (!ku::ParseVariantName(*loaded->manifest, c.variant(), &loaded->knobs))
      return "user variant " + c.variant() + ": its manifest names no such variant";
    if (c.cubin().empty()) return "user variant " + c.variant() + ": the task carries no cubin";
    cudaError_t e = cudaLibraryLoadData(&loaded->library, c.cubin().data(), nullptr, nullptr, 0,
                                        nullptr, nullptr, 0);
    if (e != cudaSuccess)
      return CudaError("user variant " + c.variant() + ": loading its cubin", e);
    const std::string& entry = loaded->manifest->entry;
    e = cudaLibraryGetKernel(&loaded->kernel, loaded->library, entry.c_str());
    if (e != cudaSuccess)
      return CudaError("user variant " + c.variant() + ": its cubin has no entry " + entry, e);

    // The registry entry: the manifest's (name, family, params, can_implement), with the launcher
    // and the kernel handle of this build.
    // A version's variant runs under its versioned name ("user.tiled@2.stages=3"): the entry
    // is the manifest's knob set of that name, named as the task names it.
    k::Variant v;
    bool found = false;
    for (k::Variant& candidate : ku::Variants(loaded->manifest)) {
      if (candidate.name != common::WithoutVersion(c.variant())) continue;
      v = std::move(candidate);
      v.name = c.variant();
      found = true;
    }
    if (!found) return "user variant " + c.variant() + ": its manifest names no such variant";
    Loaded* self = loaded.get();
    const std::string name = c.variant();
    v.launch = [self, name](const k::GemmArgs& args) { return LaunchUser(self, name, args); };
    if (std::string why =
            ku::CheckEntryParameters(*loaded->manifest, entry, ParameterSizes(loaded->kernel));
        !why.empty())
      return "user variant " + c.variant() + ": " + why;
    if (loaded->manifest->general) {
      const std::string& ref_entry = loaded->manifest->general->reference.entry;
      cudaKernel_t reference = nullptr;
      if (!ref_entry.empty()) {  // else a built-in reference (own_reference.h)
        e = cudaLibraryGetKernel(&reference, loaded->library, ref_entry.c_str());
        if (e != cudaSuccess)
          return CudaError(
              "user variant " + c.variant() + ": its cubin has no reference entry " + ref_entry, e);
        if (std::string why =
                ku::CheckEntryParameters(*loaded->manifest, ref_entry, ParameterSizes(reference));
            !why.empty())
          return "user variant " + c.variant() + ": " + why;
      }
      loaded->own = std::make_unique<OwnKernel>(loaded->manifest, loaded->knobs,
                                                static_cast<const void*>(loaded->kernel),
                                                static_cast<const void*>(reference));
      OwnKernel* own = loaded->own.get();
      v.launch = [own](const k::GemmArgs& args) { return own->Launch(args); };
      v.verify_own = [own](const k::Problem& p, void* stream, uint64_t seed, k::OwnCheck* out) {
        return own->Verify(p, stream, seed, out);
      };
      v.refresh_own = [own](uint64_t seed, void* stream) { return own->Refresh(seed, stream); };
      v.enqueue_own_check = [own](void* stream) { return own->EnqueueTimedCheck(stream); };
      v.judge_own_check = [own](k::OwnCheck* out) { return own->JudgeTimedCheck(out); };
    }
    v.kernel = [self](k::DType) { return static_cast<const void*>(self->kernel); };
    auto code = std::make_shared<k::LoadedCode>();
    code->manifest = c.manifest();
    code->cubin_sha256 = c.cubin_sha256();
    code->build_id = c.build_id();
    code->entry = entry;
    v.code = std::move(code);
    if (k::Variant* existing = registry.FindMutable(name)) {
      *existing = std::move(v);
    } else {
      registry.Add(std::move(v));
    }
    by_variant_[name] = std::move(loaded);
    Log("loaded user variant %s (cubin %.12s, %zu bytes)", name.c_str(), c.cubin_sha256().c_str(),
        c.cubin().size());
  }
  return "";
}

namespace {

std::string LaunchUser(UserKernels::Loaded* self, const std::string& name,
                       const k::GemmArgs& args) {
  const k::Problem& p = args.problem;
  if (p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX)
    return "the user kernel contract passes M, N and K as int: " + std::to_string(p.m) + "x" +
           std::to_string(p.n) + "x" + std::to_string(p.k) + " does not fit";
  ku::LaunchGeometry g;
  if (std::string why = ku::Plan(*self->manifest, self->knobs, p, &g); !why.empty())
    return name + " cannot run " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
           std::to_string(p.k) + ": " + why;
  const void* fn = static_cast<const void*>(self->kernel);
  if (g.smem_bytes > self->smem_opt_in) {
    // Beyond 48 KiB a kernel must opt in; the manifest's bound (227 KiB) is the device's.
    cudaError_t e =
        cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(g.smem_bytes));
    if (e != cudaSuccess)
      return CudaError("allowing " + std::to_string(g.smem_bytes) + " bytes of shared memory", e);
    self->smem_opt_in = int(g.smem_bytes);
  }
  const void* a = args.a;
  const void* b = args.b;
  void* c = args.c;
  int m = int(p.m), n = int(p.n), kk = int(p.k);
  void* params[] = {&a, &b, &c, &m, &n, &kk};
  cudaError_t e =
      cudaLaunchKernel(fn, dim3(unsigned(g.grid_x), unsigned(g.grid_y), unsigned(g.grid_z)),
                       dim3(unsigned(g.block), unsigned(g.block_y), unsigned(g.block_z)), params,
                       size_t(g.smem_bytes), static_cast<cudaStream_t>(args.stream));
  if (e != cudaSuccess) return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  return "";
}

}  // namespace

}  // namespace ablation::worker
