// Adding a user kernel: its checks, the quota reserved for it, its compile (on the compile
// thread) and what is stored. The registry of what is held, its queries and removal are in
// user_kernels.cc.
#include <algorithm>
#include <future>
#include <string>

#include "common/cubin_text.h"
#include "db/error.h"
#include "kernels/user/contract_plan.h"
#include "server/core/base/sha256.h"
#include "server/core/userkernels/user_kernels.h"

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

std::string MebibytesText(int64_t bytes) {
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
      return InvalidArgument("user kernel " + m.name + ": its builds come to " +
                             MebibytesText(bytes) + " of cubins by " + b.variant +
                             ", more than the " + MebibytesText(options_.max_bytes_per_kernel) +
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
        MebibytesText(owned) + " of cubins; with " + m.name + "'s " + MebibytesText(bytes) +
        " that is more than the " + MebibytesText(options_.max_bytes_per_owner) +
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

}  // namespace ablation::core
