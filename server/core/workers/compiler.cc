#include "server/core/workers/compiler.h"

#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "server/core/base/subprocess.h"

namespace ablation::core {
namespace {

// The child's "key value" lines.
std::map<std::string, std::string> ReadReport(const std::string& out) {
  std::map<std::string, std::string> report;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    const size_t space = line.find(' ');
    if (space != std::string::npos) report[line.substr(0, space)] = line.substr(space + 1);
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

}  // namespace

kernels::user::CompileResult CompileInChild(const std::string& compiler_path,
                                            const kernels::user::CompileRequest& request,
                                            const CompileLimits& limits) {
  kernels::user::CompileResult result;
  std::error_code ec;
  std::string pattern =
      (std::filesystem::temp_directory_path(ec) / "ablation-compile-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    result.log = "cannot make a temporary folder for the compiler";
    return result;
  }
  const std::filesystem::path dir(pattern);
  const std::string source = (dir / "kernel.cu").string(), cubin = (dir / "kernel.cubin").string();
  std::ofstream(source, std::ios::binary) << request.source;
  std::vector<std::string> argv = {compiler_path,
                                   "--source",
                                   source,
                                   "--entry",
                                   request.entry,
                                   "--cubin",
                                   cubin,
                                   "--arch",
                                   request.arch,
                                   "--max-log-bytes",
                                   std::to_string(limits.max_log_bytes),
                                   "--memory-mb",
                                   std::to_string(limits.memory_mb),
                                   "--cpu-seconds",
                                   std::to_string(limits.cpu_seconds)};
  for (const auto& [name, value] : request.defines) {
    argv.push_back("--define");
    argv.push_back(name + "=" + std::to_string(value));
  }
  const ProcessResult run = RunProcess(argv, limits.timeout);
  const auto report = ReadReport(run.out);
  result.log = run.err;
  if (auto it = report.find("compiler"); it != report.end()) result.compiler = it->second;
  if (auto it = report.find("options"); it != report.end()) result.options = it->second;
  if (!run.ok()) {
    if (run.exit_code != 1)  // 1: the source did not compile, and the log says why
      result.log += (result.log.empty() || result.log.back() == '\n' ? "" : "\n") +
                    std::string("the compiler ended: ") + run.Ending() +
                    (run.signal == SIGXCPU || run.signal == SIGKILL || run.signal == SIGSEGV
                         ? " (a time or memory limit of the compiler's process)"
                         : "");
    std::filesystem::remove_all(dir, ec);
    return result;
  }
  std::ifstream in(cubin, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  result.cubin = bytes.str();
  std::filesystem::remove_all(dir, ec);
  if (result.cubin.empty()) {
    result.log += "the compiler wrote no cubin\n";
    return result;
  }
  result.ptxas.registers = int(Number(report, "registers"));
  result.ptxas.found = result.ptxas.registers >= 0;
  result.ptxas.stack_bytes = Number(report, "stack_bytes");
  result.ptxas.spill_store_bytes = Number(report, "spill_store_bytes");
  result.ptxas.spill_load_bytes = Number(report, "spill_load_bytes");
  result.ptxas.static_smem_bytes = Number(report, "static_smem_bytes");
  result.ok = true;
  return result;
}

std::string CompilerVersionOf(const std::string& compiler_path) {
  if (compiler_path.empty()) return "";
  const ProcessResult run = RunProcess({compiler_path, "--version"}, std::chrono::seconds(30));
  if (!run.ok()) return "";
  const auto report = ReadReport(run.out);
  auto it = report.find("compiler");
  return it == report.end() ? "" : it->second;
}

}  // namespace ablation::core
