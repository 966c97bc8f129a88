// Compiling a user kernel: NVRTC (the toolkit's libnvrtc) turns one knob set of the source into a
// cubin for one architecture, with ptxas' report of registers, spills and shared memory. These
// are the compiler's side; the daemon runs them in a child process of their own, with time and
// memory limits (server/compile/main.cc), never in its own address space.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ablation::kernels::user {

struct CompileRequest {
  std::string source;
  std::string source_name = "kernel.cu";                 ///< what the compiler's log calls the file
  std::string entry;                                     ///< the extern "C" __global__ function
  std::string arch = "sm_90a";                           ///< --gpu-architecture
  std::vector<std::pair<std::string, int64_t>> defines;  ///< the knob set: -DNAME=value
  /// Where #include finds headers: CUDA's (cuda_bf16.h, cuda_fp16.h, ...) and nothing else.
  std::vector<std::string> include_dirs;
  /// Headers given by name and text, found before any folder: the project's PTX helpers
  /// ("ablation/ptx.cuh").
  std::vector<std::pair<std::string, std::string>> headers;
};

/// What ptxas said of the entry (-v). Unset fields: it did not say (registers -1).
struct PtxasReport {
  bool found = false;  ///< the log has ptxas' report of an entry of that name
  int registers = -1;
  int64_t stack_bytes = 0, spill_store_bytes = 0, spill_load_bytes = 0;
  int64_t static_smem_bytes = 0;
};

struct CompileResult {
  bool ok = false;
  std::string log;    ///< the compiler's log (errors with the source's line numbers)
  std::string cubin;  ///< with ok
  PtxasReport ptxas;
  std::string compiler;  ///< "nvrtc 13.0"
  std::string options;   ///< the options, space-separated, as given to the compiler
};

/// The compiler's options for `request`: the architecture, C++17, the knob set's -D flags, line
/// information, and ptxas' -v report.
std::vector<std::string> CompileOptions(const CompileRequest& request);

/// "nvrtc 13.0": what a build made here records as its compiler.
std::string CompilerVersion();

/// Compiles in this process (the child's side). A log longer than `max_log_bytes` is cut, saying
/// so. Not ok, with the log, when NVRTC refuses the source or the entry is not in the cubin.
CompileResult Compile(const CompileRequest& request, size_t max_log_bytes);

/// "" when every #include, #include_next and __has_include of `source` that names its header
/// with a literal names one by a relative path without "..": the CUDA headers and the project's
/// (ablation/ptx.cuh). Else the refusal of the first other, naming it and its line
/// ("kernel.cu(3): #include \"/etc/passwd\" is refused: ..."). A header named through a macro
/// is not seen here; the compiler's sandbox finds nothing outside those folders either, and
/// UniformIncludeErrors makes what it says of that the same whether the file exists or not.
std::string IncludeRefusal(const std::string& source, const std::string& source_name);

/// `log` with every "cannot open source file" error made the same whether the file is missing,
/// unreadable or a folder: where only Landlock confines the compile, "Permission denied" would
/// tell that a path exists.
std::string UniformIncludeErrors(const std::string& log);

/// ptxas' -v lines for `entry` in `log` (pure, for the tests and for logs read back).
PtxasReport ParsePtxasReport(const std::string& log, const std::string& entry);

}  // namespace ablation::kernels::user
