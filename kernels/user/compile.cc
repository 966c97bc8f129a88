#include "kernels/user/compile.h"

#include <nvrtc.h>

#include <cstdio>
#include <regex>
#include <sstream>

namespace ablation::kernels::user {

std::vector<std::string> CompileOptions(const CompileRequest& request) {
  std::vector<std::string> options = {"--gpu-architecture=" + request.arch, "--std=c++17",
                                      "-lineinfo", "--ptxas-options=-v"};
  for (const auto& [name, value] : request.defines)
    options.push_back("-D" + name + "=" + std::to_string(value));
  for (const std::string& dir : request.include_dirs) options.push_back("--include-path=" + dir);
  return options;
}

PtxasReport ParsePtxasReport(const std::string& log, const std::string& entry) {
  // ptxas -v, per entry:
  //   ptxas info    : Compiling entry function 'k' for 'sm_90a'
  //   ptxas info    : Function properties for k
  //   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem
  // (hand-parsed: ptxas has no machine-readable report, and these lines have kept their form)
  PtxasReport r;
  std::istringstream in(log);
  std::string line;
  bool in_entry = false;
  const std::regex compiling(R"(Compiling entry function '([^']+)')");
  const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  const std::regex used(R"(Used (\d+) registers)");
  const std::regex smem(R"((\d+) bytes smem)");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, compiling)) {
      in_entry = m[1] == entry;
      if (in_entry) r.found = true;
      continue;
    }
    if (!in_entry) continue;
    if (std::regex_search(line, m, frame)) {
      r.stack_bytes = std::stoll(m[1]);
      r.spill_store_bytes = std::stoll(m[2]);
      r.spill_load_bytes = std::stoll(m[3]);
    }
    if (std::regex_search(line, m, used)) {
      r.registers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) r.static_smem_bytes = std::stoll(m[1]);
    }
  }
  return r;
}

std::string CompilerVersion() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
}

CompileResult Compile(const CompileRequest& request, size_t max_log_bytes) {
  CompileResult out;
  out.compiler = CompilerVersion();
  const std::vector<std::string> options = CompileOptions(request);
  std::vector<const char*> argv;
  for (const std::string& o : options) {
    argv.push_back(o.c_str());
    out.options += (out.options.empty() ? "" : " ") + o;
  }
  nvrtcProgram program = nullptr;
  std::vector<const char*> header_texts, header_names;
  for (const auto& [name, text] : request.headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  nvrtcResult r =
      nvrtcCreateProgram(&program, request.source.c_str(), request.source_name.c_str(),
                         int(request.headers.size()), header_texts.data(), header_names.data());
  if (r != NVRTC_SUCCESS) {
    out.log = std::string("nvrtcCreateProgram: ") + nvrtcGetErrorString(r);
    return out;
  }
  const nvrtcResult compiled = nvrtcCompileProgram(program, int(argv.size()), argv.data());
  size_t log_size = 0;
  if (nvrtcGetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    std::string log(log_size, '\0');
    nvrtcGetProgramLog(program, log.data());
    log.resize(log_size - 1);  // the terminating NUL
    if (log.size() > max_log_bytes) {
      log.resize(max_log_bytes);
      log += "\n[the compiler's log was cut at " + std::to_string(max_log_bytes) + " bytes]\n";
    }
    out.log = std::move(log);
  }
  if (compiled != NVRTC_SUCCESS) {
    if (out.log.empty()) out.log = nvrtcGetErrorString(compiled);
    nvrtcDestroyProgram(&program);
    return out;
  }
  size_t cubin_size = 0;
  if ((r = nvrtcGetCUBINSize(program, &cubin_size)) != NVRTC_SUCCESS || cubin_size == 0) {
    out.log += std::string("no cubin: ") + nvrtcGetErrorString(r) + "\n";
    nvrtcDestroyProgram(&program);
    return out;
  }
  out.cubin.resize(cubin_size);
  nvrtcGetCUBIN(program, out.cubin.data());
  nvrtcDestroyProgram(&program);
  out.ptxas = ParsePtxasReport(out.log, request.entry);
  // The entry is a kernel of the cubin when the cubin has its code section (".text.<entry>" in
  // the ELF section names): ptxas' -v report is read for registers and spills where the
  // compiler's log carries it, which not every NVRTC does.
  const std::string section = ".text." + request.entry + std::string(1, '\0');
  if (out.cubin.find(section) == std::string::npos) {
    out.cubin.clear();
    out.log += "entry '" + request.entry +
               "' is not a kernel of this source: declare it extern \"C\" __global__\n";
    return out;
  }
  out.ok = true;
  return out;
}

}  // namespace ablation::kernels::user
