// The profile of one launch: finding ncu, its command line, reading its output, and telling a
// refusal of the host (no tool, no permission, a driver that says no) from a launch that failed.
// The RPC and the run hook that use it are in profile_requests.cc.
#include "server/core/inspect/profiler.h"

#include <dirent.h>

#include <algorithm>

#include <spdlog/spdlog.h>

#include "server/core/base/sha256.h"
#include "server/core/inspect/cuda_tool.h"

namespace ablation::core {
namespace {

constexpr const char* kTool = "ncu";
constexpr std::chrono::seconds kVersionTimeout{30};

/// /opt/nvidia/nsight-compute/<version>/ncu, newest version first (names sort by version).
std::vector<std::string> NsightInstalls() {
  std::vector<std::string> out;
  const std::string root = "/opt/nvidia/nsight-compute";
  if (DIR* d = ::opendir(root.c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') out.push_back(root + "/" + e->d_name + "/ncu");
    ::closedir(d);
  }
  std::sort(out.rbegin(), out.rend());
  return out;
}

bool Contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

/// The last lines of a stream, for a message (the worker's own error is its last line).
std::string Tail(const std::string& text, size_t max = 600) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  if (t.size() > max) t = "..." + t.substr(t.size() - max);
  for (char& c : t)
    if (c == '\n') c = ' ';
  return t;
}

}  // namespace

std::string FindNcu(const std::string& configured, std::string* looked) {
  return FindCudaTool({.name = kTool,
                       .env_var = "ABLATION_NCU",
                       .configured = configured,
                       .more = NsightInstalls(),
                       .more_looked = "/opt/nvidia/nsight-compute/*"},
                      looked);
}

std::vector<std::string> NcuArgv(const std::string& tool, const ProfileTarget& t,
                                 const std::vector<CounterSelection>& counters) {
  std::string metrics;
  for (const auto& c : counters)
    if (!c.ncu_name.empty() && c.note.empty()) metrics += (metrics.empty() ? "" : ",") + c.ncu_name;
  const std::string shape = std::to_string(t.shape.m()) + "x" + std::to_string(t.shape.n()) + "x" +
                            std::to_string(t.shape.k());
  std::vector<std::string> argv = {
      tool,
      // Observe mode: ncu's default would lock the clocks to base for the profile.
      "--clock-control", "none"};
  if (t.symbol.empty()) {
    // A library's kernels, whose names are the library's choice: the first kernel launched
    // between the one-shot worker's cudaProfilerStart and cudaProfilerStop (its profiled call).
    argv.insert(argv.end(), {"--profile-from-start", "off", "--launch-count", "1"});
  } else {
    // Only the variant's own kernel counts, and only its launch after the warm-up.
    argv.insert(argv.end(), {"--launch-skip", std::to_string(t.warmup), "--launch-count", "1",
                             "--kernel-name-base", "mangled", "--kernel-name", t.symbol});
  }
  // One row per launch, every value in its base unit (bytes, not Gbytes).
  argv.insert(argv.end(), {"--csv",
                           "--page",
                           "raw",
                           "--print-units",
                           "base",
                           "--metrics",
                           metrics,
                           t.binary,
                           "--profile-once",
                           "--device",
                           std::to_string(t.device),
                           "--variant",
                           t.variant,
                           "--dtype",
                           t.dtype,
                           "--shape",
                           shape,
                           "--warmup",
                           std::to_string(t.warmup),
                           "--seed",
                           std::to_string(t.seed)});
  if (!t.user_code_file.empty()) {
    argv.push_back("--user-code");
    argv.push_back(t.user_code_file);
  }
  if (!t.library_algo.empty()) {
    argv.push_back("--library-algo");
    argv.push_back(
        Hex(reinterpret_cast<const unsigned char*>(t.library_algo.data()), t.library_algo.size()));
  }
  return argv;
}

std::vector<v1::Counter> CountersFromNcu(const NcuOutput& output,
                                         const std::vector<CounterSelection>& counters,
                                         const std::string& tool_version) {
  std::vector<v1::Counter> out;
  const NcuLaunch* launch = output.launches.empty() ? nullptr : &output.launches.front();
  for (const auto& s : counters) {
    v1::Counter c;
    c.set_metric(s.metric);
    c.set_ncu_name(s.ncu_name);
    c.set_unit(s.unit);
    c.set_tool(kTool);
    c.set_tool_version(tool_version);
    c.set_note(s.note);
    if (launch && !s.ncu_name.empty() && s.note.empty()) {
      auto it = launch->metrics.find(s.ncu_name);
      if (it == launch->metrics.end()) {
        // ncu leaves out what it does not know rather than failing: say which it may be.
        c.set_note("ncu printed no value for it on " +
                   (launch->cc.empty() ? std::string("this device") : "cc " + launch->cc) +
                   " (not a metric this ncu knows there?)");
      } else if (auto v = ParseNcuNumber(it->second.text)) {
        c.set_value(*v);
        if (s.unit.empty()) c.set_unit(it->second.unit);
      } else {
        c.set_note("ncu read '" + it->second.text + "' on " +
                   (launch->cc.empty() ? std::string("this device") : "cc " + launch->cc));
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string RefusalSentence(ProfileRefusal refusal, const std::string& detail) {
  switch (refusal) {
    case ProfileRefusal::kNoTool:
      return "no Nsight Compute (ncu) on the daemon's host (looked in " + detail +
             "); install Nsight Compute or set ABLATION_NCU to its ncu";
    case ProfileRefusal::kPermission:
      return "the GPU's performance counters are restricted to administrators (ncu: "
             "ERR_NVGPUCTRPERM); allow them for every user with the nvidia module option "
             "NVreg_RestrictProfilingToAdminUsers=0 (a line 'options nvidia "
             "NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d/, then reload the driver "
             "or reboot), or run ablationd as root";
    case ProfileRefusal::kDriver:
      return "the driver refused the profiler (ncu: " + detail +
             "); counters need a driver and GPU that Nsight Compute supports, outside sandboxes "
             "that hide the GPU's counters, with NVreg_RestrictProfilingToAdminUsers=0 or "
             "ablationd as root";
    case ProfileRefusal::kNone:
    case ProfileRefusal::kFailed:
      break;
  }
  return detail;
}

ProfileResult ClassifyNcuRun(const ProcessResult& run, const NcuOutput& output,
                             const ProfileTarget& t) {
  ProfileResult r;
  std::string errors;
  for (const auto& e : output.errors) errors += (errors.empty() ? "" : "; ") + e;
  const std::string all = errors + "\n" + run.err;
  if (Contains(all, "ERR_NVGPUCTRPERM")) {
    r.refusal = ProfileRefusal::kPermission;
    r.message = RefusalSentence(r.refusal, "");
    return r;
  }
  // What ncu says when the driver has no profiling for it (a sandbox, an unsupported GPU).
  for (const char* s : {"LibraryNotLoaded", "Failed to initialize the profiler",
                        "Profiling is not supported", "not supported on this", "ERR_NVGPU"}) {
    if (Contains(all, s)) {
      r.refusal = ProfileRefusal::kDriver;
      r.message = RefusalSentence(r.refusal, errors.empty() ? Tail(run.err) : errors);
      return r;
    }
  }
  if (!run.started || run.timed_out) {
    r.refusal = ProfileRefusal::kFailed;
    r.message = "ncu " + run.Ending();
    return r;
  }
  if (output.launches.empty()) {
    r.refusal = ProfileRefusal::kFailed;
    std::string why = errors;
    for (const auto& w : output.warnings) why += (why.empty() ? "" : "; ") + w;
    const std::string worker = Tail(run.err);
    r.message = "ncu profiled no launch of " +
                (t.symbol.empty() ? t.variant + "'s library kernel" : t.symbol) + " (" +
                run.Ending() + (why.empty() ? "" : ": " + why) + ")" +
                (worker.empty() ? "" : "; the worker said: " + worker);
    return r;
  }
  return r;
}

Profiler::Profiler(ProfilerOptions options, const kernels::Registry* registry, db::Store* store)
    : options_(std::move(options)), registry_(registry), store_(store) {}

std::string Profiler::Tool(std::string* looked) const { return FindNcu(options_.tool, looked); }

std::string Profiler::ToolVersion(const std::string& tool) {
  {
    std::lock_guard lock(mu_);
    auto it = versions_.find(tool);
    if (it != versions_.end()) return it->second;
  }
  // "Version 2025.3.1.0 (build 36398880) (public-release)"
  ProcessResult r = RunProcess({tool, "--version"}, kVersionTimeout);
  std::string version;
  const size_t at = r.out.find("Version ");
  if (at != std::string::npos) {
    const size_t b = at + 8, e = r.out.find_first_of(" \n", b);
    version = r.out.substr(b, e == std::string::npos ? std::string::npos : e - b);
  }
  std::lock_guard lock(mu_);
  versions_[tool] = version;
  return version;
}

ProfileResult Profiler::ProfileLaunch(const ProfileTarget& target,
                                      const std::vector<CounterSelection>& counters) {
  std::string looked;
  const std::string tool = Tool(&looked);
  if (tool.empty())
    return {ProfileRefusal::kNoTool, RefusalSentence(ProfileRefusal::kNoTool, looked), {}};
  const std::string version = ToolVersion(tool);
  std::vector<CounterSelection> asked = counters;
  const auto start = std::chrono::steady_clock::now();
  ProfileTarget t = target;
  std::string remove;  // the user code's file, removed when the profile is done
  if (!t.user_code.empty()) {
    char path[] = "/tmp/ablationd-user-code-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd < 0 ||
        ::write(fd, t.user_code.data(), t.user_code.size()) != ssize_t(t.user_code.size())) {
      if (fd >= 0) ::close(fd);
      return {ProfileRefusal::kFailed, "cannot write the user variant's code for the profiler", {}};
    }
    ::close(fd);
    t.user_code_file = remove = path;
  }
  struct Remove {
    std::string path;
    ~Remove() {
      if (!path.empty()) ::unlink(path.c_str());
    }
  } cleanup{remove};
  for (int attempt = 0;; ++attempt) {
    ProcessResult run = RunProcess(NcuArgv(tool, t, asked), options_.timeout);
    NcuOutput output = ParseNcuCsv(run.out + "\n" + run.err);
    ProfileResult result = ClassifyNcuRun(run, output, target);
    // A metric this ncu does not know fails the whole run, naming it: drop it and try once more.
    bool dropped = false;
    if (result.refusal == ProfileRefusal::kFailed && attempt == 0) {
      for (auto& c : asked) {
        if (c.ncu_name.empty()) continue;
        for (const auto& e : output.errors) {
          if (Contains(e, c.ncu_name)) {
            c.note = "ncu " + version + " does not know it on " + target.arch + ": " + e;
            dropped = true;
            break;
          }
        }
      }
    }
    if (dropped) continue;
    if (result.refusal != ProfileRefusal::kNone) {
      spdlog::warn("profile {} {}: {}", target.variant, target.symbol, result.message);
      return result;
    }
    result.counters = CountersFromNcu(output, asked, version);
    result.kernel_name = output.launches.front().kernel_name;  // ClassifyNcuRun: there is one
    spdlog::info("profile {} {} {}x{}x{}: {} counters in {:.1f} s", target.variant, target.dtype,
                 target.shape.m(), target.shape.n(), target.shape.k(), result.counters.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return result;
  }
}

}  // namespace ablation::core
