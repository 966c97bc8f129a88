#include "server/core/userkernels/user_kernels.h"

#include <algorithm>
#include <charconv>
#include <future>
#include <set>

#include "common/cubin_text.h"
#include "db/error.h"
#include "kernels/user/contract_plan.h"
#include "server/core/base/sha256.h"

namespace ablation::core {
namespace {

using kernels::user::KnobSet;
using kernels::user::Manifest;

// Whether `source` reads as PTX: a line that begins (after blanks) with the .version directive
// every PTX file opens with.
bool LooksLikePtx(const std::string& source) {
  size_t at = 0;
  while (at < source.size()) {
    const size_t end = std::min(source.find('\n', at), source.size());
    const size_t first = source.find_first_not_of(" \t\r", at);
    if (first < end && source.compare(first, 9, ".version ") == 0) return true;
    at = end + 1;
  }
  return false;
}

// The names the knob sets of `version` of `m` run under now (plain where it is the newest).
std::vector<std::string> RunsAs(const Manifest& m, int64_t version, bool newest) {
  std::vector<std::string> out;
  for (const KnobSet& k : kernels::user::KnobSets(m))
    out.push_back(kernels::user::RunsAs(m, k, version, !newest));
  return out;
}

std::string Mebibytes(int64_t bytes) {
  return std::to_string(bytes >> 20) + "." +
         std::to_string(((bytes & ((1 << 20) - 1)) * 10) >> 20) + " MiB";
}

}  // namespace

// One add, from its checks to its compile thread.
struct UserKernels::Job {
  KernelCaller caller;
  std::string source, manifest_text, arch;
  std::shared_ptr<const Manifest> manifest;
  CompileSandbox sandbox;  ///< as decided at start (Load)
  Added done;
  AddOptions how;
};

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

Status UserKernels::Reserve(const KernelCaller& caller, const Manifest& m,
                            const std::string& source, const std::string& manifest_text,
                            CompileSandbox* sandbox) {
  std::lock_guard lock(mu_);
  *sandbox = options_.sandbox;
  if (!sandbox_refusal_.empty()) return FailedPrecondition(sandbox_refusal_);
  if (pending_.count(m.name))
    return InvalidArgument("a user kernel named '" + m.name + "' is being added (compiling)");
  if (auto held = held_.find(m.name); held != held_.end()) {
    // The kernel's next version: its owner's or an admin's to add.
    const Held& newest = held->second.rbegin()->second;
    const std::string& owner = newest.record.owner;
    if (!caller.admin && owner != caller.name)
      return FailedPrecondition("user kernel " + m.name + " belongs to " +
                                (owner.empty() ? std::string("another caller") : owner) +
                                "; only its owner or an admin may add a version of it");
    if (newest.record.source_sha256 == Sha256Hex(source) &&
        newest.record.manifest_sha256 == Sha256Hex(manifest_text))
      return InvalidArgument("user kernel " + m.name + ": this source and manifest are version " +
                             std::to_string(newest.record.version) +
                             "'s exactly; nothing to add (edit the source or the manifest)");
    if (int64_t(held->second.size()) >= options_.max_versions_per_kernel)
      return FailedPrecondition("user kernel " + m.name + " holds " +
                                std::to_string(held->second.size()) +
                                " versions, the most one kernel may "
                                "(user_kernels.max_versions_per_kernel); remove one first "
                                "(ablation-client kernel remove " +
                                m.name + "@" + std::to_string(held->second.begin()->first) + ")");
    pending_[m.name] = caller.name;
    return Status::Ok();
  }
  // Held and still compiling together, under one lock: concurrent adds cannot both pass. A
  // kernel counts once whatever its versions (their bytes count in max_bytes_per_owner).
  const auto mine = std::count_if(held_.begin(), held_.end(),
                                  [&](const auto& h) {
                                    return h.second.rbegin()->second.record.owner == caller.name;
                                  }) +
                    std::count_if(pending_.begin(), pending_.end(), [&](const auto& p) {
                      return p.second == caller.name && !held_.count(p.first);
                    });
  if (mine >= options_.max_kernels_per_owner)
    return FailedPrecondition((caller.name.empty() ? std::string("this caller") : caller.name) +
                              " holds " + std::to_string(mine) +
                              " user kernels (with those compiling), the most one caller may "
                              "(user_kernels.max_kernels_per_owner); remove one first");
  pending_[m.name] = caller.name;
  return Status::Ok();
}

void UserKernels::Add(const KernelCaller& caller, const std::string& source,
                      const std::string& manifest_text, const std::string& arch, Added done,
                      const AddOptions& how) {
  // A check stores nothing: the run role may ask for one wherever it may run.
  const bool allowed =
      caller.admin || ((how.check_only || options_.add_role == "run") && caller.run);
  if (!allowed)
    return done({Code::kFailedPrecondition,
                 "adding a user kernel needs the admin role" +
                     std::string(options_.add_role == "run" ? " or the run role"
                                                            : " (the configuration allows no "
                                                              "other: [user_kernels] add_role = "
                                                              "\"run\")")},
                {});
  if (source.empty()) return done(InvalidArgument("source: empty"), {});
  if (source.size() > options_.manifest.max_source_bytes)
    return done(InvalidArgument("source: " + std::to_string(source.size()) + " bytes, more than " +
                                std::to_string(options_.manifest.max_source_bytes)),
                {});
  auto m = std::make_shared<Manifest>();
  if (std::string why = ParseManifest(
          manifest_text, kernels::user::SourceFileName(how.manifest_name, "manifest.toml"),
          options_.manifest, m.get());
      !why.empty())
    return done(InvalidArgument(why), {});
  // The language the manifest says against what the source is, before a compiler's confusing
  // errors say it.
  const std::string source_name = kernels::user::SourceFileName(how.source_name);
  if (m->language == "cuda" && LooksLikePtx(source))
    return done(
        InvalidArgument(source_name + ": this source is PTX (it has a .version directive), but the "
                                      "manifest's language is cuda: add language = \"ptx\""),
        {});
  const bool cubin = common::IsCubinText(source);  // common/cubin_text.h
  if (m->language != "cubin" && cubin)
    return done(InvalidArgument(source_name +
                                ": this source is a cubin (an ELF file), but the "
                                "manifest's language is " +
                                m->language + ": add language = \"cubin\""),
                {});
  if (m->language == "cubin" && !cubin)
    return done(InvalidArgument(source_name +
                                ": the manifest says language = \"cubin\", but this source is "
                                "not one (a cubin is sent as base64 of its ELF file; "
                                "ablation-client kernel add encodes one)"),
                {});
  if (m->language == "ptx" && !LooksLikePtx(source))
    return done(InvalidArgument(source_name +
                                ": the manifest says language = \"ptx\", but this source has no "
                                "PTX .version directive (CUDA C++ needs no language key)"),
                {});
  CompileSandbox sandbox;
  if (how.check_only) {
    std::lock_guard lock(mu_);
    sandbox = options_.sandbox;
    if (!sandbox_refusal_.empty()) return done(FailedPrecondition(sandbox_refusal_), {});
  } else if (Status st = Reserve(caller, *m, source, manifest_text, &sandbox); !st.ok()) {
    return done(st, {});
  }
  auto job = std::make_shared<Job>(
      Job{caller, source, manifest_text, arch, m, sandbox, std::move(done), how});
  const bool queued = compiles_->TrySubmit([this, job](bool cancelled) {
    KernelSummary added;
    Status st = {Code::kUnavailable,
                 "the daemon is stopping; " + job->manifest->name + " was not compiled"};
    try {
      if (!cancelled) st = CompileAndStore(*job, &added);
    } catch (const std::exception& e) {
      st = StatusFromException(e);
    }
    if (!job->how.check_only) {
      std::lock_guard lock(mu_);
      pending_.erase(job->manifest->name);
    }
    job->done(st, added);
  });
  if (queued) return;
  if (!how.check_only) {
    std::lock_guard lock(mu_);
    pending_.erase(m->name);
  }
  job->done(ResourceExhausted("the compiler is busy: " + std::to_string(options_.max_waiting_adds) +
                              " user kernels already wait to be compiled "
                              "(user_kernels.max_waiting_adds); try again later"),
            {});
}

Status UserKernels::Add(const KernelCaller& caller, const std::string& source,
                        const std::string& manifest, const std::string& arch, KernelSummary* added,
                        const AddOptions& how) {
  std::promise<Status> answer;
  Add(
      caller, source, manifest, arch,
      [&](const Status& st, const KernelSummary& summary) {
        if (st.ok()) *added = summary;
        answer.set_value(st);
      },
      how);
  return answer.get_future().get();
}

Status UserKernels::CompileAndStore(const Job& job, KernelSummary* added) {
  const Manifest& m = *job.manifest;
  // Every knob set compiled before anything is stored: a kernel is held whole or not at all.
  std::vector<db::UserKernelBuild> builds;
  int64_t bytes = 0;
  for (const KnobSet& s : kernels::user::KnobSets(m)) {
    db::UserKernelBuild b;
    if (std::string why =
            CompileBuild(m, s, job.source, job.arch, job.sandbox, &b, job.how.source_name);
        !why.empty())
      return Status(Code::kInvalidArgument, why, kCompileError);
    bytes += b.cubin_bytes;
    if (bytes > options_.max_bytes_per_kernel)
      return InvalidArgument("user kernel " + m.name + ": its builds come to " + Mebibytes(bytes) +
                             " of cubins by " + b.variant + ", more than the " +
                             Mebibytes(options_.max_bytes_per_kernel) +
                             " one kernel may hold (user_kernels.max_bytes_per_kernel)");
    builds.push_back(std::move(b));
  }
  db::UserKernelRecord record;
  record.name = m.name;
  record.owner = job.caller.name;
  record.source = job.source;
  record.source_sha256 = Sha256Hex(job.source);
  record.manifest = job.manifest_text;
  record.manifest_sha256 = Sha256Hex(job.manifest_text);
  if (job.how.check_only) {
    // Checked: what an add would store, summarised, and nothing kept.
    *added = Summarise({}, Held{std::move(record), job.manifest, bytes}, false);
    for (db::UserKernelBuild& b : builds) b.cubin.clear();
    added->builds = std::move(builds);
    return Status::Ok();
  }
  std::lock_guard lock(mu_);
  int64_t owned = 0;
  for (const auto& [name, versions] : held_)
    for (const auto& [version, held] : versions)
      if (held.record.owner == job.caller.name) owned += held.bytes;
  if (owned + bytes > options_.max_bytes_per_owner)
    return FailedPrecondition(
        (job.caller.name.empty() ? std::string("this caller") : job.caller.name) + " holds " +
        Mebibytes(owned) + " of cubins; with " + m.name + "'s " + Mebibytes(bytes) +
        " that is more than the " + Mebibytes(options_.max_bytes_per_owner) +
        " one caller may hold (user_kernels.max_bytes_per_owner); remove a kernel first");
  try {
    record.id = store_->InsertUserKernel(record, builds);
  } catch (const std::exception& e) {
    return StatusFromException(e);
  }
  if (auto stored = store_->GetUserKernel(m.name)) record = *stored;
  Versions& versions = held_[m.name];
  const int64_t version = record.version;
  Held& held = versions[version] = Held{std::move(record), job.manifest, bytes};
  RebuildCatalog();
  *added = Summarise(versions, held, false);
  return Status::Ok();
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
