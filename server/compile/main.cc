// ablation-compile: compiles one knob set of a user kernel with NVRTC, in a process of its own so
// that the daemon never runs the compiler (or a source that makes it misbehave) in its address
// space. It confines itself before it reads the source (sandbox.h: only the toolkit's headers
// exist, no network, an unprivileged user, a system-call filter, death with the daemon) and sets
// limits of its own; the daemon starts it with an empty environment in a scratch folder and adds
// a wall-clock deadline.
//
//   ablation-compile --entry NAME [--arch sm_90a] [--source-name F] [--define NAME=V]...
//                    [--language cuda|ptx|cubin] [--also-entry NAME]...
//                    [--max-log-bytes N]
//                    [--memory-mb N] [--cpu-seconds N] [--max-cubin-bytes N]
//                    [--sandbox required|off] [--user UID:GID] [--parent-pid PID]
//                    [--no-namespaces] < kernel.cu
//   ablation-compile --probe-sandbox [--user UID:GID]   (can this host confine a compile?)
//   ablation-compile --version      (prints "compiler nvrtc 13.0")
//
// stdin: the source. stdout: one "key value" line each (sandbox, ok, compiler, options,
// registers, stack_bytes, spill_store_bytes, spill_load_bytes, static_smem_bytes), then with a
// build "cubin N" and the N bytes of the cubin; stderr: the compiler's log. Exit 0: compiled; 1:
// the source did not compile, or its cubin is over --max-cubin-bytes (the log says why); 2: usage
// or I/O; 3: the sandbox could not be set up (stderr says why), nothing compiled.
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "server/compile/cubin.h"
#include "server/compile/nvrtc.h"
#include "server/compile/ptx.h"
#include "server/compile/sandbox.h"

extern const char kAblationPtxHeader[];      // generated from kernels/common/ptx.cuh
extern const char kAblationPtxSm90Header[];  // generated from kernels/sm90/sm90_ptx.cuh

namespace {

using namespace ablation;

struct Options {
  kernels::user::CompileRequest request;
  std::vector<std::string> defines;
  size_t max_log_bytes = 64 * 1024;
  size_t max_cubin_bytes = size_t(16) << 20;
  size_t max_source_bytes = size_t(4) << 20;
  int memory_mb = 2048, cpu_seconds = 60;
  std::string sandbox = "required";
  std::string user;  ///< UID:GID, where the daemon is root
  pid_t parent = 0;
  bool probe = false;
  bool no_namespaces = false;
};

// "UID:GID" into the options, or false.
bool ParseUser(const std::string& text, compile::SandboxOptions* options) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return false;
  try {
    options->uid = uid_t(std::stoul(text.substr(0, colon)));
    options->gid = gid_t(std::stoul(text.substr(colon + 1)));
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

// The include folders at their real paths: the sandbox binds them where they are, and symbolic
// links to them (/usr/local/cuda -> cuda-13.0) are not there to follow.
std::vector<std::string> RealFolders(const std::vector<std::string>& dirs) {
  std::vector<std::string> out;
  for (const std::string& d : dirs) {
    std::error_code ec;
    const auto real = std::filesystem::canonical(d, ec);
    if (!ec) out.push_back(real.string());
  }
  return out;
}

bool ParseDefines(Options* o) {
  for (const std::string& d : o->defines) {
    const size_t eq = d.find('=');
    try {
      if (eq == std::string::npos || eq == 0) throw std::invalid_argument(d);
      size_t used = 0;
      const long long value = std::stoll(d.substr(eq + 1), &used);
      if (used != d.size() - eq - 1) throw std::invalid_argument(d);
      o->request.defines.emplace_back(d.substr(0, eq), value);
    } catch (const std::exception&) {
      std::cerr << "ablation-compile: --define " << d << ": expected NAME=integer\n";
      return false;
    }
  }
  return true;
}

// The source on stdin, at most `max` bytes (a longer one is refused: the daemon bounds it first).
bool ReadSource(size_t max, std::string* out) {
  char buf[65536];
  for (ssize_t n; (n = ::read(0, buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    out->append(buf, size_t(n));
    if (out->size() > max) return false;
  }
  return true;
}

int Compile(const Options& o, const std::string& sandbox_line) {
  kernels::user::CompileRequest request = o.request;
  if (!ReadSource(o.max_source_bytes, &request.source)) {
    std::cerr << "ablation-compile: the source on stdin could not be read (or is over "
              << o.max_source_bytes << " bytes)\n";
    return 2;
  }
  request.source_name = kernels::user::SourceFileName(o.request.source_name);
  const kernels::user::CompileResult r =
      request.language == "ptx"     ? compile::CompilePtx(request, o.max_log_bytes)
      : request.language == "cubin" ? compile::ReadCubin(request)
                                    : compile::Compile(request, o.max_log_bytes);
  std::cerr << r.log;
  std::cout << "sandbox " << sandbox_line << "\n"
            << "ok " << (r.ok ? 1 : 0) << "\n"
            << "compiler " << r.compiler << "\n"
            << "options " << r.options << "\n";
  if (!r.ok) return 1;
  if (r.cubin.size() > o.max_cubin_bytes) {
    std::cerr << "the cubin is " << r.cubin.size() << " bytes, more than the " << o.max_cubin_bytes
              << " a build may have (user_kernels.max_cubin_bytes): large device data or code\n";
    std::cout << "cubin_bytes " << r.cubin.size() << "\n";
    return 1;
  }
  std::cout << "registers " << r.ptxas.registers << "\n"
            << "stack_bytes " << r.ptxas.stack_bytes << "\n"
            << "spill_store_bytes " << r.ptxas.spill_store_bytes << "\n"
            << "spill_load_bytes " << r.ptxas.spill_load_bytes << "\n"
            << "static_smem_bytes " << r.ptxas.static_smem_bytes << "\n";
  if (!r.param_bytes.empty()) {
    std::cout << "param_bytes";
    for (size_t i = 0; i < r.param_bytes.size(); ++i)
      std::cout << (i ? "," : " ") << r.param_bytes[i];
    std::cout << "\n";
  }
  std::cout << "cubin " << r.cubin.size() << "\n";
  std::cout.write(r.cubin.data(), std::streamsize(r.cubin.size()));
  std::cout.flush();
  return std::cout ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ablation::compile;
  // `ablation-compile --version`: the compiler a build made now would record ("nvrtc 13.0"), so
  // that the daemon can tell the builds it holds from another compiler's.
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::cout << "compiler " << CompilerVersion() << "\n";
    return 0;
  }
  CLI::App app{"ablation-compile: one knob set of a user kernel, compiled by NVRTC"};
  Options o;
  app.add_flag("--probe-sandbox", o.probe, "set the sandbox up, say what it has, and exit");
  app.add_option("--entry", o.request.entry, "the extern \"C\" __global__ function");
  app.add_option("--arch", o.request.arch, "--gpu-architecture (default sm_90a)");
  app.add_option("--source-name", o.request.source_name,
                 "what messages call the source (a plain file name; default kernel.cu)");
  app.add_option("--define", o.defines, "NAME=VALUE, a knob's value; repeatable");
  app.add_option("--also-entry", o.request.also_entries,
                 "another kernel the source must have (a reference entry); repeatable");
  app.add_option(
         "--language", o.request.language,
         "cuda (CUDA C++ through NVRTC, the default), ptx (the toolkit's PTX compiler) or cubin "
         "(base64 of a built one, read and checked)")
      ->check(CLI::IsMember({"cuda", "ptx", "cubin"}));
  o.request.include_dirs = {ABLATION_CUDA_INCLUDE};
  // The project's PTX helpers (kernels/common/ptx.cuh, the built-in kernels' own), for
  // #include "ablation/ptx.cuh": cp.async with wait_group<N>, ldmatrix x2/x4/trans, mma.sync.
  // And their Hopper equivalents (kernels/sm90/sm90_ptx.cuh), for #include "ablation/ptx_sm90.cuh".
  o.request.headers = {{"ablation/ptx.cuh", kAblationPtxHeader},
                       {"ablation/ptx_sm90.cuh", kAblationPtxSm90Header}};
  app.add_option("--include", o.request.include_dirs,
                 "CUDA's headers (default: the toolkit's it was built with, " ABLATION_CUDA_INCLUDE
                 ")");
  app.add_option("--max-log-bytes", o.max_log_bytes, "the compiler's log is cut beyond this");
  app.add_option("--max-cubin-bytes", o.max_cubin_bytes, "a larger cubin is refused");
  app.add_option("--memory-mb", o.memory_mb, "private writable memory (default 2048)");
  app.add_option("--cpu-seconds", o.cpu_seconds, "CPU time limit (default 60)");
  app.add_option("--sandbox", o.sandbox, "required (default) or off (the operator's choice)")
      ->check(CLI::IsMember({"required", "off"}));
  app.add_option("--user", o.user, "UID:GID to compile as where started as root");
  app.add_option("--parent-pid", o.parent, "end when the parent is no longer this process");
  app.add_flag("--no-namespaces", o.no_namespaces,
               "Landlock alone, as on a host whose namespaces are off (for its tests)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (!o.probe && (o.request.entry.empty() || !ParseDefines(&o))) {
    if (o.request.entry.empty()) std::cerr << "ablation-compile: --entry is required\n";
    return 2;
  }
  o.request.include_dirs = RealFolders(o.request.include_dirs);
  compile::SandboxOptions sandbox;
  sandbox.read_dirs = o.request.include_dirs;
  sandbox.parent = o.parent;
  sandbox.namespaces = !o.no_namespaces;
  if (!o.user.empty() && !ParseUser(o.user, &sandbox)) {
    std::cerr << "ablation-compile: --user " << o.user << ": expected UID:GID\n";
    return 2;
  }
  // Two malloc arenas, not one per core (64 MiB of address space reserved each).
  mallopt(M_ARENA_MAX, 2);
  // NVRTC loads its builtins library on its first compile: a one-line compile before the sandbox
  // and the limits loads it (from the toolkit's lib folder, which the sandbox does not show), so
  // that they bound the work on the user's source alone.
  CompileRequest warm_up;
  warm_up.source = "extern \"C\" __global__ void ablation_warm_up() {}\n";
  warm_up.entry = "ablation_warm_up";
  warm_up.arch = o.request.arch.empty() ? "sm_90a" : o.request.arch;
  if (const CompileResult w = compile::Compile(warm_up, 4096); !w.ok && !o.probe) {
    std::cerr << "ablation-compile: the compiler does not work here: " << w.log << "\n";
    return 2;
  }
  // The PTX compiler likewise, where it is asked for.
  if (o.request.language == "ptx") {
    CompileRequest ptx_warm_up = warm_up;
    ptx_warm_up.language = "ptx";
    ptx_warm_up.source = ".version 8.0\n.target " + ptx_warm_up.arch +
                         "\n.address_size 64\n.visible .entry ablation_warm_up()\n{\n\tret;\n}\n";
    if (const CompileResult w = compile::CompilePtx(ptx_warm_up, 4096); !w.ok) {
      std::cerr << "ablation-compile: the PTX compiler does not work here: " << w.log << "\n";
      return 2;
    }
  }
  std::string sandbox_line = "off (user_kernels.allow_unsandboxed_compiles)";
  if (o.probe || o.sandbox == "required") {
    const compile::SandboxReport report = compile::ApplySandbox(sandbox);
    if (!report.ok) {
      std::cerr << "ablation-compile: the compiler's sandbox cannot be set up here: " << report.why
                << "\n";
      return 3;
    }
    sandbox_line = report.Describe();
  }
  if (o.probe) {
    // What a compile would see: the host's files cannot be opened (Landlock alone leaves them
    // visible to stat, which NVRTC's includes do not rely on: sandbox.h).
    const auto opens = [](const char* path) {
      const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd >= 0) ::close(fd);
      return fd >= 0;
    };
    const bool hidden = !opens("/etc/passwd") && !opens("/proc/self/environ") && !opens("/");
    std::cout << "sandbox " << sandbox_line << (hidden ? "" : " (host files visible!)") << "\n";
    return hidden ? 0 : 3;
  }
  // Private memory is bounded tightly, address space loosely: NVRTC reserves more than it touches
  // (on the 16-core H200 node the smallest example ran out of 8 GiB of address space and compiled
  // within 16 GiB, while on 2 cores it is resident in under 100 MB).
  compile::ApplyLimits(o.memory_mb, o.memory_mb * 8, o.cpu_seconds,
                       o.max_cubin_bytes + o.max_log_bytes + (1 << 20));
  return Compile(o, sandbox_line);
}
