// The user kernels the daemon holds: loading them at start (compiled again where the compiler
// changed), the catalog runs are planned against, finding, listing, showing and removing them.
// Adding one is in user_kernels_add.cc.
#include "server/core/userkernels/user_kernels.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "db/error.h"
#include "kernels/user/contract_plan.h"
#include "server/core/base/sha256.h"

namespace ablation::core {
namespace {

using kernels::user::KnobSet;
using kernels::user::Manifest;

// The names the knob sets of `version` of `m` run under now (plain where it is the newest).
std::vector<std::string> RunsAs(const Manifest& m, int64_t version, bool newest) {
  std::vector<std::string> out;
  for (const KnobSet& k : kernels::user::KnobSets(m))
    out.push_back(kernels::user::RunsAs(m, k, version, !newest));
  return out;
}

}  // namespace

UserKernels::UserKernels(db::Store* store, UserKernelOptions options,
                         const kernels::Registry* builtin)
    : store_(store), options_(std::move(options)), builtin_(builtin) {
  compiles_ = std::make_unique<WorkQueue>(options_.compile_threads,
                                          size_t(std::max(options_.max_waiting_adds, 0)));
  std::lock_guard lock(mu_);
  RebuildCatalog();
}

UserKernels::~UserKernels() { Stop(); }

void UserKernels::Stop() { compiles_->Stop(); }

std::string UserKernels::CompileBuild(const Manifest& m, const KnobSet& s,
                                      const std::string& source, const std::string& arch,
                                      const CompileSandbox& sandbox, db::UserKernelBuild* b,
                                      const std::string& source_name) {
  kernels::user::CompileRequest request;
  request.source = source;
  request.source_name = source_name;
  request.entry = m.entry;
  request.arch = arch;
  request.language = m.language;
  if (m.general && !m.general->reference.entry.empty())
    request.also_entries = {m.general->reference.entry};
  for (size_t i = 0; i < m.knobs.size(); ++i)
    request.defines.emplace_back(m.knobs[i].name, s.values[i]);
  const std::string variant = kernels::user::VariantName(m, s);
  // The entry's parameters as PTX declares them, before assembling it (a cubin's: below).
  std::vector<size_t> bytes;
  if (m.language == "ptx") {
    std::string why = kernels::user::PtxEntryParameterBytes(source, m.entry, &bytes);
    if (why.empty()) why = kernels::user::CheckEntryParameters(m, m.entry, bytes);
    if (!why.empty()) return variant + " was not compiled: " + why;
  }
  const ChildCompile child =
      CompileInChild(options_.compiler_path, request, options_.compile, sandbox);
  const kernels::user::CompileResult& r = child.result;
  if (child.sandbox_refused) return variant + " was not compiled: " + r.log;
  if (!r.ok) return variant + " does not compile (" + r.options + "):\n" + r.log;
  if (std::string why = r.param_bytes.empty()
                            ? ""
                            : kernels::user::CheckEntryParameters(m, m.entry, r.param_bytes);
      !why.empty())
    return variant + ": " + why;
  b->variant = variant;
  b->arch = arch;
  b->compiler = r.compiler;
  b->options = r.options;
  b->cubin = r.cubin;
  b->cubin_sha256 = Sha256Hex(r.cubin);
  b->cubin_bytes = int64_t(r.cubin.size());
  b->registers = r.ptxas.registers;
  b->stack_bytes = r.ptxas.stack_bytes;
  b->spill_store_bytes = r.ptxas.spill_store_bytes;
  b->spill_load_bytes = r.ptxas.spill_load_bytes;
  b->static_smem_bytes = r.ptxas.static_smem_bytes;
  b->log = r.log;
  return "";
}

void UserKernels::RebuildCatalog() {
  auto catalog = std::make_shared<kernels::Registry>();
  if (builtin_ != nullptr) *catalog = *builtin_;
  for (const auto& [name, versions] : held_) {
    const int64_t newest = versions.rbegin()->first;
    for (const auto& [version, held] : versions) {
      // Per variant: the newest build of this daemon's compiler, else the newest of any (a
      // kernel is compiled for GPU 0's architecture; again at start when the compiler changed).
      std::map<std::string, db::UserKernelBuild> builds;
      for (db::UserKernelBuild& b : store_->UserKernelBuilds(held.record.id, false)) {
        auto it = builds.find(b.variant);
        const auto rank = [&](const db::UserKernelBuild& x) {
          return std::make_pair(!compiler_.empty() && x.compiler == compiler_, x.id);
        };
        if (it == builds.end() || rank(b) > rank(it->second)) builds[b.variant] = std::move(b);
      }
      // The newest version under the plain names (user.tiled.stages=3), every older one under
      // its own (user.tiled@1.stages=3); a build is stored under the plain name.
      for (kernels::Variant& v :
           kernels::user::Variants(held.manifest, version, version != newest)) {
        auto it = builds.find(common::WithoutVersion(v.name));
        if (it == builds.end()) continue;  // no build: nothing a worker could load
        auto code = std::make_shared<kernels::LoadedCode>();
        code->manifest = held.record.manifest;
        // Read from the database when a task carries it: a catalog of every cubin in memory
        // held 544 MB for one kernel of a 240 MiB section.
        code->cubin = [store = store_, id = it->second.id] { return store->UserKernelCubin(id); };
        code->cubin_sha256 = it->second.cubin_sha256;
        code->cubin_bytes = it->second.cubin_bytes;
        code->build_id = it->second.id;
        code->entry = held.manifest->entry;
        code->registers = it->second.registers;
        code->static_smem_bytes = it->second.static_smem_bytes;
        v.code = std::move(code);
        if (catalog->Find(v.name) == nullptr) catalog->Add(std::move(v));
      }
    }
  }
  catalog_ = std::move(catalog);
}

std::shared_ptr<const kernels::Registry> UserKernels::Catalog() {
  std::lock_guard lock(mu_);
  return catalog_;
}

std::vector<std::shared_ptr<const Manifest>> UserKernels::Manifests() {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<const Manifest>> out;
  for (const auto& [name, versions] : held_) out.push_back(versions.rbegin()->second.manifest);
  return out;
}

std::vector<kernels::user::VersionLadder> UserKernels::VersionLadders() {
  std::lock_guard lock(mu_);
  std::vector<kernels::user::VersionLadder> out;
  for (const auto& [name, versions] : held_) {
    if (versions.size() < 2) continue;
    kernels::user::VersionLadder ladder{
        name, std::string(kernels::ToString(versions.rbegin()->second.manifest->dtype)), {}};
    const int64_t newest = versions.rbegin()->first;
    for (const auto& [version, held] : versions)
      ladder.versions.emplace_back(version, RunsAs(*held.manifest, version, version == newest));
    out.push_back(std::move(ladder));
  }
  return out;
}

std::string UserKernels::SandboxState() {
  std::lock_guard lock(mu_);
  return sandbox_state_;
}

void UserKernels::Load(std::vector<std::string>* problems) {
  // Whether compiles can be confined here, asked of the compiler itself (it sets the sandbox up
  // and says what it got), before anything is compiled.
  if (!options_.compiler_path.empty()) {
    const SandboxProbe probe = ProbeCompilerSandbox(options_.compiler_path, options_.sandbox);
    std::lock_guard lock(mu_);
    if (probe.ok) {
      sandbox_state_ = "compiles are sandboxed: " + probe.description;
    } else if (options_.allow_unsandboxed_compiles) {
      options_.sandbox.required = false;
      sandbox_state_ =
          "compiles run UNSANDBOXED, as user_kernels.allow_unsandboxed_compiles allows: a user "
          "kernel's #include may read any file the daemon can, and its log returns it (the "
          "sandbox cannot be set up here: " +
          probe.why + ")";
      problems->push_back(sandbox_state_);
    } else {
      sandbox_refusal_ =
          "adding user kernels is refused on this host: the compiler's sandbox "
          "cannot be set up (" +
          probe.why +
          "); the operator may allow unsandboxed compiles "
          "(user_kernels.allow_unsandboxed_compiles = true)";
      sandbox_state_ = sandbox_refusal_;
      problems->push_back(sandbox_refusal_);
    }
  }
  std::lock_guard lock(mu_);
  held_.clear();
  for (db::UserKernelRecord& r : store_->ListUserKernels()) {
    auto m = std::make_shared<Manifest>();
    // Stored kernels were accepted under the limits of their day: read them with none.
    const kernels::user::ManifestLimits unbounded = kernels::user::ManifestLimits::Unbounded();
    const std::string why = ParseManifest(r.manifest, r.name + ".toml", unbounded, m.get());
    if (!why.empty()) {
      problems->push_back("user kernel " + r.name + " was not loaded: " + why);
      continue;
    }
    int64_t bytes = 0;
    for (const db::UserKernelBuild& b : store_->UserKernelBuilds(r.id, false))
      bytes += b.cubin_bytes;
    const std::string name = r.name;
    const int64_t version = r.version;
    held_[name][version] = Held{std::move(r), std::move(m), bytes};
  }
  RebuildChangedCompilers(problems);
  RebuildCatalog();
}

// A cubin is stored with the compiler that made it: where this daemon's compiler is another,
// every knob set is compiled again (for the architecture it was built for) and kept beside the
// old builds, which measurements keep pointing at. A kernel the new compiler refuses keeps its
// old builds, and `problems` says so. mu_ held (nothing else runs yet: this is the start).
void UserKernels::RebuildChangedCompilers(std::vector<std::string>* problems) {
  compiler_ = CompilerVersionOf(options_.compiler_path);
  for (auto& [name, versions] : held_)
    for (auto& [version, held] : versions) {
      if (compiler_.empty() || !sandbox_refusal_.empty()) break;
      const std::vector<db::UserKernelBuild> stored =
          store_->UserKernelBuilds(held.record.id, false);
      std::map<std::string, std::string> arch_of;  // variant -> its build's architecture
      std::set<std::string> current;               // variants with a build of this compiler
      for (const db::UserKernelBuild& b : stored) {
        arch_of[b.variant] = b.arch;
        if (b.compiler == compiler_) current.insert(b.variant);
      }
      std::vector<db::UserKernelBuild> rebuilt;
      std::string why;
      for (const KnobSet& s : kernels::user::KnobSets(*held.manifest)) {
        const std::string variant = kernels::user::VariantName(*held.manifest, s);
        auto arch = arch_of.find(variant);
        if (current.count(variant) || arch == arch_of.end()) continue;
        db::UserKernelBuild b;
        why =
            CompileBuild(*held.manifest, s, held.record.source, arch->second, options_.sandbox, &b);
        if (!why.empty()) break;
        rebuilt.push_back(std::move(b));
      }
      if (!why.empty()) {
        problems->push_back("user kernel " + name + " does not compile with " + compiler_ +
                            "; its earlier builds are kept: " + why);
        continue;
      }
      if (rebuilt.empty()) continue;
      try {
        store_->InsertUserKernelBuilds(held.record.id, rebuilt);
        problems->push_back("user kernel " + name + ": " + std::to_string(rebuilt.size()) +
                            " knob sets compiled again with " + compiler_);
      } catch (const std::exception& e) {
        problems->push_back("user kernel " + name + ": storing its new builds: " + e.what());
      }
    }
}

Status UserKernels::Find(const std::string& asked, Versions** versions, Held** held) {
  std::string tag;
  const std::string name = common::WithoutVersion(asked, &tag);
  auto it = held_.find(name);
  if (it == held_.end()) return NotFound("no user kernel named '" + name + "'");
  *versions = &it->second;
  if (tag.empty() || tag == "latest") {
    *held = &it->second.rbegin()->second;
    return Status::Ok();
  }
  int64_t version = 0;
  const auto [end, error] = std::from_chars(tag.data(), tag.data() + tag.size(), version);
  std::string held_versions;
  for (const auto& [v, unused] : it->second)
    held_versions += (held_versions.empty() ? "" : ", ") + std::to_string(v);
  if (error != std::errc() || end != tag.data() + tag.size() || !it->second.count(version))
    return NotFound("user kernel " + name + " has no version '" + tag +
                    "' (held: " + held_versions + "; or @latest)");
  *held = &it->second.at(version);
  return Status::Ok();
}

Status UserKernels::Remove(const KernelCaller& caller, const std::string& asked) {
  std::lock_guard lock(mu_);
  Versions* versions = nullptr;
  Held* held = nullptr;
  if (Status st = Find(asked, &versions, &held); !st.ok()) return st;
  const std::string& name = held->record.name;
  const bool one = asked.find('@') != std::string::npos;
  for (const auto& [version, h] : *versions) {
    if (one && &h != held) continue;
    if (!caller.admin && h.record.owner != caller.name)
      return FailedPrecondition(
          "user kernel " + name + " belongs to " +
          (h.record.owner.empty() ? std::string("another caller") : h.record.owner) +
          "; only its owner or an admin may remove it");
  }
  const std::string kernel = name;  // `held` goes with the erase below
  try {
    store_->RemoveUserKernel(kernel, 0, one ? held->record.version : 0);
  } catch (const std::exception& e) {
    return StatusFromException(e);
  }
  if (one) versions->erase(held->record.version);
  if (!one || versions->empty()) held_.erase(kernel);
  RebuildCatalog();
  return Status::Ok();
}

KernelSummary UserKernels::Summarise(const Versions& versions, const Held& held, bool with_text) {
  const Manifest& m = *held.manifest;
  const int64_t newest = versions.empty() ? held.record.version : versions.rbegin()->first;
  const auto names = [&](const Held& h) {
    return RunsAs(*h.manifest, h.record.version, h.record.version == newest);
  };
  KernelSummary s;
  s.name = held.record.name;
  s.owner = held.record.owner;
  s.entry = m.entry;
  s.description = m.description;
  s.dtype = std::string(kernels::ToString(m.dtype));
  s.source_sha256 = held.record.source_sha256;
  s.manifest_sha256 = held.record.manifest_sha256;
  s.created_at_ms = held.record.created_at_ms;
  s.version = held.record.version;
  s.variants = names(held);
  for (const auto& [version, h] : versions)
    s.versions.push_back({version, h.record.owner, h.record.source_sha256, h.record.manifest_sha256,
                          h.record.created_at_ms, names(h)});
  if (held.record.id != 0) s.builds = store_->UserKernelBuilds(held.record.id, false);
  // A build is stored under the plain name; it is shown under the name it runs as.
  for (db::UserKernelBuild& b : s.builds)
    if (KnobSet k; kernels::user::ParseVariantName(m, b.variant, &k))
      b.variant = kernels::user::RunsAs(m, k, held.record.version, held.record.version != newest);
  if (with_text) {
    s.source = held.record.source;
    s.manifest = held.record.manifest;
  }
  return s;
}

std::vector<KernelSummary> UserKernels::List() {
  std::lock_guard lock(mu_);
  std::vector<KernelSummary> out;
  for (const auto& [name, versions] : held_)
    out.push_back(Summarise(versions, versions.rbegin()->second, false));
  return out;
}

Status UserKernels::Show(const KernelCaller& viewer, const std::string& name, KernelSummary* out) {
  std::lock_guard lock(mu_);
  Versions* versions = nullptr;
  Held* held = nullptr;
  if (Status st = Find(name, &versions, &held); !st.ok()) return st;
  const std::string& readers = options_.source_readers;
  const bool may_read = viewer.admin || held->record.owner == viewer.name || readers == "read" ||
                        (readers == "run" && viewer.run);
  *out = Summarise(*versions, *held, may_read);
  if (!may_read)
    out->source_withheld = "the source and manifest of " + name +
                           " are shown to its owner and admins only" +
                           std::string(readers == "run" ? " and the run role" : "") +
                           " (user_kernels.source_readers = \"" + readers + "\")";
  return Status::Ok();
}

std::vector<kernels::Variant> UserKernels::Variants() {
  std::lock_guard lock(mu_);
  std::vector<kernels::Variant> out;
  for (const auto& [name, versions] : held_) {
    const int64_t newest = versions.rbegin()->first;
    for (const auto& [version, held] : versions)
      for (kernels::Variant& v :
           kernels::user::Variants(held.manifest, version, version != newest)) {
        // The build a run would take (the catalog's), for what its listing says of it.
        if (catalog_)
          if (const kernels::Variant* built = catalog_->Find(v.name)) v.code = built->code;
        out.push_back(std::move(v));
      }
  }
  return out;
}

}  // namespace ablation::core
