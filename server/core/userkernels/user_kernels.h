// The user kernels a daemon holds: added with their source and manifest, every knob set compiled
// (in the compiler's sandboxed child process, on a few threads of their own with a bounded
// queue) before anything is stored, kept in the database with their builds (cubins compressed,
// read when a task needs one), loaded again at start, listed, shown and removed. Who may add one
// is the caller's role and the configuration's; how much one may ask for is bounded: the
// manifest (kernels/user/manifest.h), a build's cubin, the bytes of one kernel and of one owner,
// the kernels of one owner (counted with those still compiling, so concurrent adds cannot pass
// it), the adds waiting for the compiler.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "db/store.h"
#include "kernels/registry.h"
#include "kernels/user/manifest.h"
#include "server/core/base/status.h"
#include "server/core/base/work_queue.h"
#include "server/core/userkernels/compiler.h"

namespace ablation::core {

struct UserKernelOptions {
  std::string compiler_path;  ///< ablation-compile
  CompileLimits compile;
  /// How compiles are confined; uid/gid set by ablationd from compile_user where it is root.
  CompileSandbox sandbox;
  std::string compile_user = "nobody";  ///< where the daemon is root: who compiles
  /// Where the host cannot sandbox a compile, adding kernels is refused unless this is set (the
  /// operator's decision, logged at every start).
  bool allow_unsandboxed_compiles = false;
  kernels::user::ManifestLimits manifest;
  int max_kernels_per_owner = 16;
  int max_versions_per_kernel = 16;  ///< versions held of one name (removed ones not counted)
  int64_t max_bytes_per_kernel = int64_t(64) << 20;  ///< its builds' cubins together
  int64_t max_bytes_per_owner = int64_t(256) << 20;  ///< the cubins of every kernel it holds
  int compile_threads = 1;   ///< compiles at once (each bounded by compile.memory_mb)
  int max_waiting_adds = 4;  ///< adds waiting for a compile thread; past it, refused
  /// Who may add a kernel besides admin: "run" lets every caller with the run role; "" none.
  std::string add_role = "";
  /// Who may read a kernel's source and manifest: "owner" (its owner and admins), "run" (also
  /// every caller with the run role) or "read" (everyone who may list kernels).
  std::string source_readers = "owner";
};

/// Who asks (the rpc layer's authorizer decides the identity and the role).
struct KernelCaller {
  std::string name;  ///< "" for an anonymous local caller
  bool admin = false;
  bool run = false;  ///< has the run role
};

/// One version of a kernel as listed.
struct KernelVersionSummary {
  int64_t version = 0;
  std::string owner, source_sha256, manifest_sha256;
  int64_t created_at_ms = 0;
  std::vector<std::string> variants;  ///< the canonical names its knob sets run under now
};

/// What `kernel list` and `kernel show` answer of one kernel: one version of it (the newest,
/// unless Show was asked for another) and the list of every version held.
struct KernelSummary {
  std::string name, owner, entry, description, dtype;
  std::string source_sha256, manifest_sha256;
  int64_t created_at_ms = 0;
  int64_t version = 0;
  std::vector<KernelVersionSummary> versions;  ///< oldest first
  std::vector<std::string> variants;           ///< canonical names, in knob order
  std::vector<db::UserKernelBuild> builds;     ///< without cubins
  std::string source, manifest;                ///< with Show only, to a caller who may read them
  std::string source_withheld;                 ///< with Show: why they were not given
};

/// How an add is asked for beyond its texts.
struct UserKernelAddOptions {
  /// What messages call the source and the manifest: the user's file names
  /// (kernels::user::SourceFileName keeps a plain one), so an error reads "tiled.cu:33:7:
  /// error: ..." and "tiled.toml:18: ...".
  std::string source_name = "kernel.cu";
  std::string manifest_name = "manifest.toml";
  /// A check: the manifest validated and every knob set compiled for `arch`, nothing stored or
  /// held, the name free or not (an edit of a held kernel is checked too). The summary names
  /// each knob set's build (registers, spills, shared memory) as an add's does.
  bool check_only = false;
};

class UserKernels {
 public:
  /// `builtin`: the daemon's own catalog, which Catalog() extends (null: user variants only).
  UserKernels(db::Store* store, UserKernelOptions options,
              const kernels::Registry* builtin = nullptr);
  ~UserKernels();

  /// At start: whether this host can sandbox a compile (the compiler's probe; `problems` says
  /// when it cannot, and whether the operator allowed unsandboxed compiles), then every stored
  /// kernel's manifest read again, its variants named. A kernel whose manifest this daemon no
  /// longer accepts is left stored and out of the list, `problems` saying why. Builds made by
  /// another compiler than this daemon's are made again (kept beside the old ones); `problems`
  /// says what was rebuilt and what the new compiler refused.
  void Load(std::vector<std::string>* problems);
  /// What compiles run in, for the log at start: "sandboxed: mount-namespace landlock=7 ..." or
  /// why they are not.
  std::string SandboxState();

  using Added = std::function<void(const Status& status, const KernelSummary& added)>;
  using AddOptions = UserKernelAddOptions;
  /// Checks the caller's permission, the sandbox, the source's size, the manifest
  /// (InvalidArgument naming the file, line and key) and the caller's number of kernels, and
  /// reserves the name and the caller's place. A name held already makes the kernel's next
  /// version: only its owner or an admin may add one, at most max_versions_per_kernel are held,
  /// and one identical to the newest (source and manifest) is refused. Then queues the compiles
  /// (ResourceExhausted when max_waiting_adds already wait). On a compile thread every knob set is
  /// compiled for `arch` (a compile error is InvalidArgument with the compiler's log, bounded), the
  /// bytes checked, and the kernel stored with its builds, all or nothing. `done` is called once,
  /// on that thread, or at once when refused before.
  void Add(const KernelCaller& caller, const std::string& source, const std::string& manifest,
           const std::string& arch, Added done, const AddOptions& how = {});
  /// The same, waiting for the answer (tests, tools).
  Status Add(const KernelCaller& caller, const std::string& source, const std::string& manifest,
             const std::string& arch, KernelSummary* added, const AddOptions& how = {});
  /// The owner or an admin; NotFound for a name no kernel has. "tiled" removes every version,
  /// "tiled@2" that one (the one before becomes the newest where it was).
  Status Remove(const KernelCaller& caller, const std::string& name);
  /// Every kernel, by name, as its newest version.
  std::vector<KernelSummary> List();
  /// "tiled" (the newest), "tiled@2", "tiled@latest"; with the source and manifest where `viewer`
  /// may read them (source_readers).
  Status Show(const KernelCaller& viewer, const std::string& name, KernelSummary* out);

  /// Every kernel held in two versions or more: its name, dtype and each version's variants
  /// (the names they run under now), oldest first; a `sweep --preset user.<kernel>.versions`.
  std::vector<kernels::user::VersionLadder> VersionLadders();

  /// The registry entries of every kernel held (launchers are the worker's).
  std::vector<kernels::Variant> Variants();

  /// What a run may name: the built-in catalog and every held kernel's variants, each user
  /// variant with its build (Variant::code: manifest, build id and a reader of its cubin from
  /// the database). A snapshot, made again when a kernel is added or removed: a run keeps the
  /// one it was planned with, so that a kernel removed meanwhile runs to the end of the runs
  /// that named it.
  std::shared_ptr<const kernels::Registry> Catalog();

  /// The manifests of the kernels held (the newest version of each), in name order (their
  /// ladders are presets).
  std::vector<std::shared_ptr<const kernels::user::Manifest>> Manifests();

  /// Lets the compile running finish, answers those waiting Unavailable, then stops the compile
  /// threads (shutdown).
  void Stop();

 private:
  struct Held {
    db::UserKernelRecord record;
    std::shared_ptr<const kernels::user::Manifest> manifest;
    int64_t bytes = 0;  ///< its builds' cubins together
  };
  struct Job;
  using Versions = std::map<int64_t, Held>;  ///< by version
  KernelSummary Summarise(const Versions& versions, const Held& held, bool with_text);
  /// The kernel and version a name gives ("tiled", "tiled@2", "tiled@latest"); mu_ held.
  Status Find(const std::string& name, Versions** versions, Held** held);
  /// Makes catalog_ again from builtin_ and held_; mu_ held.
  void RebuildCatalog();
  /// Why `caller` may not add `m` now, else reserves its name and place and says how compiles
  /// are confined; mu_ taken.
  Status Reserve(const KernelCaller& caller, const kernels::user::Manifest& m,
                 const std::string& source, const std::string& manifest_text,
                 CompileSandbox* sandbox);
  /// The compiles of one add and what follows them, on a compile thread.
  Status CompileAndStore(const Job& job, KernelSummary* added);
  /// One knob set compiled: "" or why not (the compiler's log, bounded).
  std::string CompileBuild(const kernels::user::Manifest& m, const kernels::user::KnobSet& s,
                           const std::string& source, const std::string& arch,
                           const CompileSandbox& sandbox, db::UserKernelBuild* b,
                           const std::string& source_name = "kernel.cu");
  void RebuildChangedCompilers(std::vector<std::string>* problems);

  db::Store* store_;
  UserKernelOptions options_;
  std::mutex mu_;
  std::map<std::string, Versions> held_;        ///< by name; guarded by mu_
  std::map<std::string, std::string> pending_;  ///< name -> owner, compiling now; guarded by mu_
  const kernels::Registry* builtin_;
  std::string compiler_;  ///< this daemon's compiler ("nvrtc 13.0"), asked at Load; guarded by mu_
  std::string sandbox_refusal_;  ///< why kernels cannot be added here ("" : they can); mu_
  std::string sandbox_state_;    ///< guarded by mu_
  std::shared_ptr<const kernels::Registry> catalog_;  ///< guarded by mu_
  std::unique_ptr<WorkQueue> compiles_;               ///< declared last: stopped first
};

}  // namespace ablation::core
