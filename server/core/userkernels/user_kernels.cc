#include "server/core/userkernels/user_kernels.h"

#include <algorithm>
#include <set>

#include "db/error.h"
#include "server/core/base/sha256.h"

namespace ablation::core {
namespace {

using kernels::user::KnobSet;
using kernels::user::Manifest;

}  // namespace

namespace {

/// One knob set of `m` compiled (in the compiler's child) into a build row; "" or the compile
/// error with the compiler's log.
std::string CompileBuild(const std::string& compiler_path, const CompileLimits& limits,
                         const Manifest& m, const KnobSet& s, const std::string& source,
                         const std::string& arch, db::UserKernelBuild* b) {
  kernels::user::CompileRequest request;
  request.source = source;
  request.entry = m.entry;
  request.arch = arch;
  for (size_t i = 0; i < m.knobs.size(); ++i)
    request.defines.emplace_back(m.knobs[i].name, s.values[i]);
  const std::string variant = kernels::user::VariantName(m, s);
  const kernels::user::CompileResult r = CompileInChild(compiler_path, request, limits);
  if (!r.ok) return variant + " does not compile (" + r.options + "):\n" + r.log;
  b->variant = variant;
  b->arch = arch;
  b->compiler = r.compiler;
  b->options = r.options;
  b->cubin = r.cubin;
  b->cubin_sha256 = Sha256Hex(r.cubin);
  b->registers = r.ptxas.registers;
  b->stack_bytes = r.ptxas.stack_bytes;
  b->spill_store_bytes = r.ptxas.spill_store_bytes;
  b->spill_load_bytes = r.ptxas.spill_load_bytes;
  b->static_smem_bytes = r.ptxas.static_smem_bytes;
  b->log = r.log;
  return "";
}

}  // namespace

UserKernels::UserKernels(db::Store* store, UserKernelOptions options,
                         const kernels::Registry* builtin)
    : store_(store), options_(std::move(options)), builtin_(builtin) {
  std::lock_guard lock(mu_);
  RebuildCatalog();
}

void UserKernels::RebuildCatalog() {
  auto catalog = std::make_shared<kernels::Registry>();
  if (builtin_ != nullptr) *catalog = *builtin_;
  for (const auto& [name, held] : held_) {
    // Per variant: the newest build of this daemon's compiler, else the newest of any (a
    // kernel is compiled for GPU 0's architecture; again at start when the compiler changed).
    std::map<std::string, db::UserKernelBuild> builds;
    for (db::UserKernelBuild& b : store_->UserKernelBuilds(held.record.id, true)) {
      auto it = builds.find(b.variant);
      const auto rank = [&](const db::UserKernelBuild& x) {
        return std::make_pair(!compiler_.empty() && x.compiler == compiler_, x.id);
      };
      if (it == builds.end() || rank(b) > rank(it->second)) builds[b.variant] = std::move(b);
    }
    for (kernels::Variant& v : kernels::user::Variants(held.manifest)) {
      auto it = builds.find(v.name);
      if (it == builds.end()) continue;  // no build: nothing a worker could load
      auto code = std::make_shared<kernels::LoadedCode>();
      code->manifest = held.record.manifest;
      code->cubin = std::move(it->second.cubin);
      code->cubin_sha256 = it->second.cubin_sha256;
      code->build_id = it->second.id;
      code->entry = held.manifest->entry;
      v.code = std::move(code);
      if (catalog->Find(v.name) == nullptr) catalog->Add(std::move(v));
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
  for (const auto& [name, held] : held_) out.push_back(held.manifest);
  return out;
}

void UserKernels::Load(std::vector<std::string>* problems) {
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
    const std::string name = r.name;
    held_[name] = Held{std::move(r), std::move(m)};
  }
  // A cubin is stored with the compiler that made it: where this daemon's compiler is another,
  // every knob set is compiled again (for the architecture it was built for) and kept beside the
  // old builds, which measurements keep pointing at. A kernel the new compiler refuses keeps its
  // old builds, and `problems` says so.
  compiler_ = CompilerVersionOf(options_.compiler_path);
  for (auto& [name, held] : held_) {
    if (compiler_.empty()) break;
    const std::vector<db::UserKernelBuild> stored = store_->UserKernelBuilds(held.record.id, false);
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
      why = CompileBuild(options_.compiler_path, options_.compile, *held.manifest, s,
                         held.record.source, arch->second, &b);
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
  RebuildCatalog();
}

Status UserKernels::Add(const KernelCaller& caller, const std::string& source,
                        const std::string& manifest_text, const std::string& arch,
                        KernelSummary* added) {
  const bool allowed = caller.admin || (options_.add_role == "run" && caller.run);
  if (!allowed)
    return {Code::kFailedPrecondition,
            "adding a user kernel needs the admin role" +
                std::string(options_.add_role == "run" ? " or the run role"
                                                       : " (the configuration allows no other: "
                                                         "[user_kernels] add_role = \"run\")")};
  if (source.empty()) return InvalidArgument("source: empty");
  if (source.size() > options_.manifest.max_source_bytes)
    return InvalidArgument("source: " + std::to_string(source.size()) + " bytes, more than " +
                           std::to_string(options_.manifest.max_source_bytes));
  auto m = std::make_shared<Manifest>();
  if (std::string why = ParseManifest(manifest_text, "manifest", options_.manifest, m.get());
      !why.empty())
    return InvalidArgument(why);
  {
    std::lock_guard lock(mu_);
    if (held_.count(m->name))
      return InvalidArgument("a user kernel named '" + m->name + "' exists; remove it first");
    const auto mine = std::count_if(held_.begin(), held_.end(), [&](const auto& h) {
      return h.second.record.owner == caller.name;
    });
    if (mine >= options_.max_kernels_per_owner)
      return FailedPrecondition((caller.name.empty() ? std::string("this caller") : caller.name) +
                                " holds " + std::to_string(mine) +
                                " user kernels, the most one caller may; remove one first");
  }
  // Every knob set compiled before anything is stored: a kernel is held whole or not at all.
  std::vector<db::UserKernelBuild> builds;
  for (const KnobSet& s : kernels::user::KnobSets(*m)) {
    db::UserKernelBuild b;
    if (std::string why =
            CompileBuild(options_.compiler_path, options_.compile, *m, s, source, arch, &b);
        !why.empty())
      return InvalidArgument(why);
    builds.push_back(std::move(b));
  }
  db::UserKernelRecord record;
  record.name = m->name;
  record.owner = caller.name;
  record.source = source;
  record.source_sha256 = Sha256Hex(source);
  record.manifest = manifest_text;
  record.manifest_sha256 = Sha256Hex(manifest_text);
  std::lock_guard lock(mu_);
  if (held_.count(m->name))  // added by another caller while this one compiled
    return InvalidArgument("a user kernel named '" + m->name + "' exists; remove it first");
  try {
    record.id = store_->InsertUserKernel(record, builds);
  } catch (const std::exception& e) {
    return StatusFromException(e);
  }
  if (auto stored = store_->GetUserKernel(m->name)) record = *stored;
  Held& held = held_[m->name] = Held{std::move(record), m};
  RebuildCatalog();
  *added = Summarise(held, false);
  return Status::Ok();
}

Status UserKernels::Remove(const KernelCaller& caller, const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = held_.find(name);
  if (it == held_.end()) return NotFound("no user kernel named '" + name + "'");
  if (!caller.admin && it->second.record.owner != caller.name)
    return FailedPrecondition("user kernel " + name + " belongs to " +
                              (it->second.record.owner.empty() ? std::string("another caller")
                                                               : it->second.record.owner) +
                              "; only its owner or an admin may remove it");
  try {
    store_->RemoveUserKernel(name, 0);
  } catch (const std::exception& e) {
    return StatusFromException(e);
  }
  held_.erase(it);
  RebuildCatalog();
  return Status::Ok();
}

KernelSummary UserKernels::Summarise(const Held& held, bool with_text) {
  const Manifest& m = *held.manifest;
  KernelSummary s;
  s.name = held.record.name;
  s.owner = held.record.owner;
  s.entry = m.entry;
  s.description = m.description;
  s.dtype = std::string(kernels::ToString(m.dtype));
  s.source_sha256 = held.record.source_sha256;
  s.manifest_sha256 = held.record.manifest_sha256;
  s.created_at_ms = held.record.created_at_ms;
  for (const KnobSet& k : kernels::user::KnobSets(m))
    s.variants.push_back(kernels::user::VariantName(m, k));
  s.builds = store_->UserKernelBuilds(held.record.id, false);
  if (with_text) {
    s.source = held.record.source;
    s.manifest = held.record.manifest;
  }
  return s;
}

std::vector<KernelSummary> UserKernels::List() {
  std::lock_guard lock(mu_);
  std::vector<KernelSummary> out;
  for (const auto& [name, held] : held_) out.push_back(Summarise(held, false));
  return out;
}

Status UserKernels::Show(const std::string& name, KernelSummary* out) {
  std::lock_guard lock(mu_);
  auto it = held_.find(name);
  if (it == held_.end()) return NotFound("no user kernel named '" + name + "'");
  *out = Summarise(it->second, true);
  return Status::Ok();
}

std::vector<kernels::Variant> UserKernels::Variants() {
  std::lock_guard lock(mu_);
  std::vector<kernels::Variant> out;
  for (const auto& [name, held] : held_)
    for (kernels::Variant& v : kernels::user::Variants(held.manifest)) out.push_back(std::move(v));
  return out;
}

}  // namespace ablation::core
