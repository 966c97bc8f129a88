// The user kernels a daemon holds: added with their source and manifest, every knob set compiled
// (in the compiler's child process) before anything is stored, kept in the database with their
// builds, loaded again at start, listed, shown and removed. Who may add one is the caller's role
// and the configuration's; how much one may ask for is bounded (kernels/user/manifest.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "db/store.h"
#include "kernels/registry.h"
#include "kernels/user/manifest.h"
#include "server/core/base/status.h"
#include "server/core/workers/compiler.h"

namespace ablation::core {

struct UserKernelOptions {
  std::string compiler_path;  ///< ablation-compile
  CompileLimits compile;
  kernels::user::ManifestLimits manifest;
  int max_kernels_per_owner = 16;
  /// Who may add a kernel besides admin: "run" lets every caller with the run role; "" none.
  std::string add_role = "";
};

/// Who asks (the rpc layer's authorizer decides the identity and the role).
struct KernelCaller {
  std::string name;  ///< "" for an anonymous local caller
  bool admin = false;
  bool run = false;  ///< has the run role
};

/// What `kernel list` and `kernel show` answer of one kernel.
struct KernelSummary {
  std::string name, owner, entry, description, dtype;
  std::string source_sha256, manifest_sha256;
  int64_t created_at_ms = 0;
  std::vector<std::string> variants;        ///< canonical names, in knob order
  std::vector<db::UserKernelBuild> builds;  ///< without cubins
  std::string source, manifest;             ///< with Show only
};

class UserKernels {
 public:
  /// `builtin`: the daemon's own catalog, which Catalog() extends (null: user variants only).
  UserKernels(db::Store* store, UserKernelOptions options,
              const kernels::Registry* builtin = nullptr);

  /// At start: every stored kernel's manifest read again, its variants named. A kernel whose
  /// manifest this daemon no longer accepts is left stored and out of the list, `problems`
  /// saying why. Builds made by another compiler than this daemon's are made again (kept beside
  /// the old ones); `problems` says what was rebuilt and what the new compiler refused.
  void Load(std::vector<std::string>* problems);

  /// Checks the caller's permission, the source's size, the manifest (InvalidArgument naming the
  /// file, line and key) and the caller's number of kernels; compiles every knob set for `arch`
  /// (a compile error is InvalidArgument with the compiler's log); stores the kernel with its
  /// builds, all or nothing.
  Status Add(const KernelCaller& caller, const std::string& source, const std::string& manifest,
             const std::string& arch, KernelSummary* added);
  /// The owner or an admin; NotFound for a name no kernel has.
  Status Remove(const KernelCaller& caller, const std::string& name);
  std::vector<KernelSummary> List();
  Status Show(const std::string& name, KernelSummary* out);

  /// The registry entries of every kernel held (launchers are the worker's).
  std::vector<kernels::Variant> Variants();

  /// What a run may name: the built-in catalog and every held kernel's variants, each user
  /// variant with its build (Variant::code: manifest, cubin, build id). A snapshot, made again
  /// when a kernel is added or removed: a run keeps the one it was planned with, so that a kernel
  /// removed meanwhile runs to the end of the runs that named it.
  std::shared_ptr<const kernels::Registry> Catalog();

  /// The manifests of the kernels held, in name order (their ladders are presets).
  std::vector<std::shared_ptr<const kernels::user::Manifest>> Manifests();

 private:
  struct Held {
    db::UserKernelRecord record;
    std::shared_ptr<const kernels::user::Manifest> manifest;
  };
  KernelSummary Summarise(const Held& held, bool with_text);
  /// Makes catalog_ again from builtin_ and held_; mu_ held.
  void RebuildCatalog();

  db::Store* store_;
  UserKernelOptions options_;
  std::mutex mu_;
  std::map<std::string, Held> held_;  ///< by name; guarded by mu_
  const kernels::Registry* builtin_;
  std::string compiler_;  ///< this daemon's compiler ("nvrtc 13.0"), asked at Load; guarded by mu_
  std::shared_ptr<const kernels::Registry> catalog_;  ///< guarded by mu_
};

}  // namespace ablation::core
