// ablation-compile: compiles one knob set of a user kernel with NVRTC, in a process of its own so
// that the daemon never runs the compiler (or a source that makes it misbehave) in its address
// space. Limits of its own (address space, CPU time, file size, no core dumps) are set before the
// source is read; the daemon adds a wall-clock deadline.
//
//   ablation-compile --source FILE --entry NAME --cubin OUT [--arch sm_90a] [--define NAME=V]...
//                    [--max-log-bytes N] [--memory-mb N] [--cpu-seconds N]
//   ablation-compile --version      (prints "compiler nvrtc 13.0")
//
// stdout: one "key value" line each (ok, compiler, options, registers, stack_bytes,
// spill_store_bytes, spill_load_bytes, static_smem_bytes); stderr: the compiler's log.
// Exit 0: compiled; 1: the source did not compile (the log says why); 2: usage or I/O.
#include <malloc.h>
#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>

#include "kernels/user/compile.h"

extern const char kAblationPtxHeader[];      // generated from kernels/common/ptx.cuh
extern const char kAblationPtxSm90Header[];  // generated from kernels/sm90/sm90_ptx.cuh

namespace {

void Limit(int resource, rlim_t value) {
  const rlimit limit{value, value};
  setrlimit(resource, &limit);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace ablation::kernels::user;
  // `ablation-compile --version`: the compiler a build made now would record ("nvrtc 13.0"), so
  // that the daemon can tell the builds it holds from another compiler's.
  if (argc == 2 && std::string(argv[1]) == "--version") {
    std::cout << "compiler " << CompilerVersion() << "\n";
    return 0;
  }
  CLI::App app{"ablation-compile: one knob set of a user kernel, compiled by NVRTC"};
  std::string source_path, cubin_path;
  std::vector<std::string> defines;
  CompileRequest request;
  size_t max_log_bytes = 64 * 1024;
  int memory_mb = 16384, cpu_seconds = 60;
  app.add_option("--source", source_path, "the CUDA source")->required();
  app.add_option("--entry", request.entry, "the extern \"C\" __global__ function")->required();
  app.add_option("--cubin", cubin_path, "where the cubin goes")->required();
  app.add_option("--arch", request.arch, "--gpu-architecture (default sm_90a)");
  app.add_option("--define", defines, "NAME=VALUE, a knob's value; repeatable");
  request.include_dirs = {ABLATION_CUDA_INCLUDE};
  // The project's PTX helpers (kernels/common/ptx.cuh, the built-in kernels' own), for
  // #include "ablation/ptx.cuh": cp.async with wait_group<N>, ldmatrix x2/x4/trans, mma.sync.
  // And their Hopper equivalents (kernels/sm90/sm90_ptx.cuh), for #include "ablation/ptx_sm90.cuh".
  request.headers = {{"ablation/ptx.cuh", kAblationPtxHeader},
                     {"ablation/ptx_sm90.cuh", kAblationPtxSm90Header}};
  app.add_option("--include", request.include_dirs,
                 "CUDA's headers (default: the toolkit's it was built with, " ABLATION_CUDA_INCLUDE
                 ")");
  app.add_option("--max-log-bytes", max_log_bytes, "the compiler's log is cut beyond this");
  app.add_option("--memory-mb", memory_mb, "address space limit (default 16384)");
  app.add_option("--cpu-seconds", cpu_seconds, "CPU time limit (default 60)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  // The address-space limit bounds reservations, not use. On the H200 node (16 cores), NVRTC 13.0
  // compiling examples/user-kernels/tiled_gemm.cu ran out of 4 and 8 GiB of address space and
  // compiled within 16 GiB (with glibc's malloc arenas held to two; one per core reserves 64 MiB
  // each); the same compile needs less than 4 GiB on a 2-core machine. 16 GiB is the default.
  mallopt(M_ARENA_MAX, 2);
  // NVRTC loads its builtins library on its first compile: a one-line compile before the limits
  // loads it, so that the limits bound the work on the user's source, and a limit too small for
  // that work reads as one rather than as a library that failed to load.
  CompileRequest warm_up;
  warm_up.source = "extern \"C\" __global__ void ablation_warm_up() {}\n";
  warm_up.entry = "ablation_warm_up";
  warm_up.arch = request.arch;
  if (const CompileResult w = Compile(warm_up, 4096); !w.ok) {
    std::cerr << "ablation-compile: the compiler does not work here: " << w.log << "\n";
    return 2;
  }
  Limit(RLIMIT_AS, rlim_t(memory_mb) << 20);
  Limit(RLIMIT_CPU, rlim_t(cpu_seconds));
  Limit(RLIMIT_FSIZE, rlim_t(256) << 20);
  Limit(RLIMIT_CORE, 0);
  for (const std::string& d : defines) {
    const size_t eq = d.find('=');
    try {
      if (eq == std::string::npos || eq == 0) throw std::invalid_argument(d);
      size_t used = 0;
      const long long value = std::stoll(d.substr(eq + 1), &used);
      if (used != d.size() - eq - 1) throw std::invalid_argument(d);
      request.defines.emplace_back(d.substr(0, eq), value);
    } catch (const std::exception&) {
      std::cerr << "ablation-compile: --define " << d << ": expected NAME=integer\n";
      return 2;
    }
  }
  std::ifstream in(source_path, std::ios::binary);
  if (!in) {
    std::cerr << "ablation-compile: cannot read " << source_path << "\n";
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  request.source = text.str();
  request.source_name = "kernel.cu";
  const CompileResult r = Compile(request, max_log_bytes);
  std::cerr << r.log;
  std::cout << "ok " << (r.ok ? 1 : 0) << "\n"
            << "compiler " << r.compiler << "\n"
            << "options " << r.options << "\n";
  if (!r.ok) return 1;
  std::cout << "registers " << r.ptxas.registers << "\n"
            << "stack_bytes " << r.ptxas.stack_bytes << "\n"
            << "spill_store_bytes " << r.ptxas.spill_store_bytes << "\n"
            << "spill_load_bytes " << r.ptxas.spill_load_bytes << "\n"
            << "static_smem_bytes " << r.ptxas.static_smem_bytes << "\n";
  std::ofstream out(cubin_path, std::ios::binary | std::ios::trunc);
  out.write(r.cubin.data(), std::streamsize(r.cubin.size()));
  if (!out) {
    std::cerr << "ablation-compile: cannot write " << cubin_path << "\n";
    return 2;
  }
  return 0;
}
