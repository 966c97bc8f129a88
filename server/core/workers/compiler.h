// The daemon's side of compiling a user kernel: ablation-compile (server/compile/main.cc) run as
// a child process with a deadline and limits of its own, so that the compiler never runs in the
// daemon. The source goes through a private temporary folder; the cubin comes back in memory.
#pragma once

#include <chrono>
#include <string>

#include "kernels/user/compile.h"

namespace ablation::core {

struct CompileLimits {
  std::chrono::seconds timeout{120};  ///< wall clock, then the child's process group is killed
  int memory_mb = 16384;  ///< the child's address space (reserved, not used: ablation-compile says)
  int cpu_seconds = 60;
  size_t max_log_bytes = 64 * 1024;
};

/// Compiles `request` with the compiler at `compiler_path`. Not ok, with `log` saying why, when
/// the source does not compile (the compiler's log, its line numbers intact), the child was
/// killed at the deadline or by a limit, or it could not run at all.
/// The compiler's version as its builds record it ("nvrtc 13.0"), from `compiler_path
/// --version`; "" where it cannot say (not there, killed, another program).
std::string CompilerVersionOf(const std::string& compiler_path);

kernels::user::CompileResult CompileInChild(const std::string& compiler_path,
                                            const kernels::user::CompileRequest& request,
                                            const CompileLimits& limits);

}  // namespace ablation::core
