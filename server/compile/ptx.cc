#include "server/compile/ptx.h"

#include <nvJitLink.h>

#include <regex>
#include <sstream>

#include "server/compile/nvrtc.h"

namespace ablation::compile {

using kernels::user::CompileRequest;
using kernels::user::CompileResult;

std::vector<std::string> PtxOptions(const CompileRequest& request) {
  return {"-arch=" + request.arch, "-lineinfo", "-Xptxas=-v"};
}

std::string PtxCompilerVersion() {
  unsigned major = 0, minor = 0;
  nvJitLinkVersion(&major, &minor);
  return "nvjitlink " + std::to_string(major) + "." + std::to_string(minor);
}

std::string PtxInUserWords(const std::string& log, const std::string& source_name) {
  // "ptxas application ptx input, line 47; error   : Not a name of any known instruction"
  const std::regex located(R"(^ptxas application ptx input, line (\d+); (\w+)\s*: (.*)$)");
  std::istringstream in(log);
  std::string line, out;
  std::smatch m;
  while (std::getline(in, line)) {
    std::string clean;
    for (char c : line)
      if (c == '\t' || static_cast<unsigned char>(c) >= 0x20) clean += c;
    if (std::regex_match(clean, m, located))
      clean = source_name + ":" + m[1].str() + ":1: " + m[2].str() + ": " + m[3].str();
    out += clean + "\n";
  }
  return out;
}

namespace {

std::string Log(nvJitLinkHandle h, bool info) {
  size_t size = 0;
  if ((info ? nvJitLinkGetInfoLogSize(h, &size) : nvJitLinkGetErrorLogSize(h, &size)) !=
          NVJITLINK_SUCCESS ||
      size <= 1)
    return "";
  std::string log(size, '\0');
  if ((info ? nvJitLinkGetInfoLog(h, log.data()) : nvJitLinkGetErrorLog(h, log.data())) !=
      NVJITLINK_SUCCESS)
    return "";
  log.resize(size - 1);  // the terminating NUL
  return log;
}

}  // namespace

CompileResult CompilePtx(const CompileRequest& request, size_t max_log_bytes) {
  CompileResult out;
  out.compiler = CompilerVersion();  // the toolkit's, as every build of this compiler records it
  const std::vector<std::string> options = PtxOptions(request);
  out.options = PtxCompilerVersion();
  for (const std::string& o : options) out.options += " " + o;
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  nvJitLinkHandle h = nullptr;
  if (nvJitLinkResult r = nvJitLinkCreate(&h, uint32_t(argv.size()), argv.data());
      r != NVJITLINK_SUCCESS) {
    out.log = request.source_name + ": error: the PTX compiler refused the options (" +
              std::to_string(int(r)) + ": is " + request.arch + " an architecture it knows?)\n";
    return out;
  }
  const nvJitLinkResult added =
      nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, request.source.data(), request.source.size(),
                       request.source_name.c_str());
  const nvJitLinkResult linked = added == NVJITLINK_SUCCESS ? nvJitLinkComplete(h) : added;
  out.log =
      CutLog(PtxInUserWords(Log(h, false) + Log(h, true), request.source_name), max_log_bytes);
  size_t size = 0;
  if (linked != NVJITLINK_SUCCESS || nvJitLinkGetLinkedCubinSize(h, &size) != NVJITLINK_SUCCESS ||
      size == 0) {
    if (out.log.empty())
      out.log = request.source_name + ": error: the PTX does not assemble (nvJitLink " +
                std::to_string(int(linked)) + ")\n";
    nvJitLinkDestroy(&h);
    return out;
  }
  out.cubin.resize(size);
  nvJitLinkGetLinkedCubin(h, out.cubin.data());
  nvJitLinkDestroy(&h);
  out.ptxas = ParsePtxasReport(out.log, request.entry);
  out.ok = HasEntries(request, "it needs a .visible .entry of that name", &out);
  return out;
}

}  // namespace ablation::compile
