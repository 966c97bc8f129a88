#include "server/core/userkernels/compiler.h"

#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <map>
#include <sstream>

#include "server/core/base/subprocess.h"

namespace ablation::core {
namespace {

// The child's "key value" lines, up to its "cubin N" line; `cubin` gets the N bytes after it.
std::map<std::string, std::string> ReadReport(const std::string& out, std::string* cubin) {
  std::map<std::string, std::string> report;
  size_t start = 0;
  while (start < out.size()) {
    const size_t end = out.find('\n', start);
    if (end == std::string::npos) break;
    const std::string line = out.substr(start, end - start);
    start = end + 1;
    const size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    const std::string key = line.substr(0, space), value = line.substr(space + 1);
    if (key == "cubin" && cubin != nullptr) {
      const size_t n = size_t(std::strtoull(value.c_str(), nullptr, 10));
      if (out.size() - start == n) *cubin = out.substr(start);
      break;
    }
    report[key] = value;
  }
  return report;
}

int64_t Number(const std::map<std::string, std::string>& report, const std::string& key) {
  auto it = report.find(key);
  if (it == report.end()) return 0;
  try {
    return std::stoll(it->second);
  } catch (const std::exception&) {
    return 0;
  }
}

std::vector<std::string> SandboxArgs(const CompileSandbox& sandbox) {
  std::vector<std::string> args;
  if (sandbox.uid != uid_t(-1))
    args = {"--user", std::to_string(sandbox.uid) + ":" + std::to_string(sandbox.gid)};
  args.push_back("--parent-pid");
  args.push_back(std::to_string(::getpid()));
  return args;
}

// A private folder (0700) that the child takes as its working folder and builds its empty root
// on; removed afterwards.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::error_code ec;
    std::string pattern =
        (std::filesystem::temp_directory_path(ec) / "ablation-compile-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

ProcessOptions ChildOptions(const std::string& working_dir) {
  ProcessOptions o;
  o.empty_environment = true;  // the daemon's may hold ABLATION_FLEET_DB and its password
  o.working_dir = working_dir;
  o.die_with_parent = true;
  o.close_other_fds = true;
  return o;
}

// Why the child ended, for the log: a limit of its own named where the signal says which.
std::string Ending(const ProcessResult& run, const CompileLimits& limits) {
  std::string why = "the compiler ended: " + run.Ending();
  if (run.signal == SIGXCPU)
    return why + " (its CPU time limit, " + std::to_string(limits.cpu_seconds) + " s)";
  if (run.signal == SIGABRT && run.err.find("out of memory") != std::string::npos)
    return why + " (it ran out of the " + std::to_string(limits.memory_mb) +
           " MiB it may use, user_kernels.compile_memory_mb: device data or code this large is "
           "refused)";
  if (run.signal == SIGKILL || run.signal == SIGSEGV)
    return why + " (a time or memory limit of the compiler's process)";
  return why;
}

}  // namespace

ChildCompile CompileInChild(const std::string& compiler_path,
                            const kernels::user::CompileRequest& request,
                            const CompileLimits& limits, const CompileSandbox& sandbox) {
  ChildCompile child;
  kernels::user::CompileResult& result = child.result;
  ScratchFolder scratch;
  if (scratch.path().empty()) {
    result.log = "cannot make a scratch folder for the compiler";
    return child;
  }
  std::vector<std::string> argv = {compiler_path,
                                   "--entry",
                                   request.entry,
                                   "--arch",
                                   request.arch,
                                   "--source-name",
                                   kernels::user::SourceFileName(request.source_name),
                                   "--max-log-bytes",
                                   std::to_string(limits.max_log_bytes),
                                   "--max-cubin-bytes",
                                   std::to_string(limits.max_cubin_bytes),
                                   "--memory-mb",
                                   std::to_string(limits.memory_mb),
                                   "--cpu-seconds",
                                   std::to_string(limits.cpu_seconds),
                                   "--sandbox",
                                   sandbox.required ? "required" : "off",
                                   "--language",
                                   request.language};
  for (const std::string& a : SandboxArgs(sandbox)) argv.push_back(a);
  for (const std::string& entry : request.also_entries) {
    argv.push_back("--also-entry");
    argv.push_back(entry);
  }
  for (const auto& [name, value] : request.defines) {
    argv.push_back("--define");
    argv.push_back(name + "=" + std::to_string(value));
  }
  ProcessOptions options = ChildOptions(scratch.path());
  options.stdin_data = request.source;
  options.max_out_bytes = limits.max_cubin_bytes + 64 * 1024;
  options.max_err_bytes = limits.max_log_bytes + 4096;
  const ProcessResult run = RunProcess(argv, limits.timeout, options);
  std::string cubin;
  const auto report = ReadReport(run.out, &cubin);
  result.log = run.err;
  if (auto it = report.find("sandbox"); it != report.end()) child.sandbox = it->second;
  if (auto it = report.find("compiler"); it != report.end()) result.compiler = it->second;
  if (auto it = report.find("options"); it != report.end()) result.options = it->second;
  if (!run.ok()) {
    child.sandbox_refused = run.exit_code == 3;
    if (run.exit_code != 1 && !child.sandbox_refused)  // 1: the log says why
      result.log +=
          (result.log.empty() || result.log.back() == '\n' ? "" : "\n") + Ending(run, limits);
    return child;
  }
  if (cubin.empty()) {
    result.log += "the compiler wrote no cubin\n";
    return child;
  }
  result.cubin = std::move(cubin);
  result.ptxas.registers = int(Number(report, "registers"));
  result.ptxas.found = result.ptxas.registers >= 0;
  result.ptxas.stack_bytes = Number(report, "stack_bytes");
  result.ptxas.spill_store_bytes = Number(report, "spill_store_bytes");
  result.ptxas.spill_load_bytes = Number(report, "spill_load_bytes");
  result.ptxas.static_smem_bytes = Number(report, "static_smem_bytes");
  if (auto it = report.find("param_bytes"); it != report.end()) {
    std::string list = it->second;
    for (size_t at = 0; at < list.size();) {
      const size_t comma = std::min(list.find(',', at), list.size());
      result.param_bytes.push_back(
          size_t(std::strtoull(list.substr(at, comma - at).c_str(), nullptr, 10)));
      at = comma + 1;
    }
  }
  result.ok = true;
  return child;
}

SandboxProbe ProbeCompilerSandbox(const std::string& compiler_path, const CompileSandbox& sandbox) {
  SandboxProbe probe;
  ScratchFolder scratch;
  if (scratch.path().empty()) {
    probe.why = "no scratch folder could be made for the compiler";
    return probe;
  }
  std::vector<std::string> argv = {compiler_path, "--probe-sandbox"};
  for (const std::string& a : SandboxArgs(sandbox)) argv.push_back(a);
  ProcessOptions options = ChildOptions(scratch.path());
  options.max_out_bytes = options.max_err_bytes = 4096;
  const ProcessResult run = RunProcess(argv, std::chrono::seconds(60), options);
  const auto report = ReadReport(run.out, nullptr);
  if (run.ok() && report.count("sandbox")) {
    probe.ok = true;
    probe.description = report.at("sandbox");
    return probe;
  }
  std::string why = run.err;
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  const std::string prefix = "ablation-compile: ";
  if (why.rfind(prefix, 0) == 0) why = why.substr(prefix.size());
  probe.why = why.empty() ? "the compiler " + compiler_path + " ended: " + run.Ending() : why;
  return probe;
}

std::string CompilerVersionOf(const std::string& compiler_path) {
  if (compiler_path.empty()) return "";
  ProcessOptions options;
  options.empty_environment = true;
  options.close_other_fds = true;
  const ProcessResult run =
      RunProcess({compiler_path, "--version"}, std::chrono::seconds(30), options);
  if (!run.ok()) return "";
  const auto report = ReadReport(run.out, nullptr);
  auto it = report.find("compiler");
  return it == report.end() ? "" : it->second;
}

}  // namespace ablation::core
