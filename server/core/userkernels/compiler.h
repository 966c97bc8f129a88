// The daemon's side of compiling a user kernel: ablation-compile (server/compile/main.cc) run as
// a child process that confines itself (server/compile/sandbox.h), started with an empty
// environment, no descriptor of the daemon's, a private scratch folder as its working folder and
// death with the daemon; the source goes in on its stdin, the cubin comes back on its stdout,
// both bounded. A deadline and limits of its own bound its time and memory.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>

#include "kernels/user/build.h"

namespace ablation::core {

struct CompileLimits {
  std::chrono::seconds timeout{120};  ///< wall clock, then the child's process group is killed
  /// The child's private writable memory (RLIMIT_DATA; its address space may be 8 times this,
  /// reserved and never touched): one compile at a time fits in the unit's MemoryMax beside the
  /// daemon and two GPUs' workers (deploy/systemd/ablationd.service).
  int memory_mb = 2048;
  int cpu_seconds = 60;
  size_t max_log_bytes = 64 * 1024;
  /// A build's cubin: larger device data or code is refused (a 146-byte source with a 240 MiB
  /// initialised __device__ array made a 240 MiB cubin, stored and held twice over).
  size_t max_cubin_bytes = size_t(16) << 20;
};

/// How the compile is confined (the child sets it up; the daemon only says what is required).
struct CompileSandbox {
  /// false: the operator allowed unsandboxed compiles (user_kernels.allow_unsandboxed_compiles):
  /// the child is still started as above, but does not confine itself.
  bool required = true;
  /// Where the daemon is root: the user the compile runs as (user_kernels.compile_user).
  uid_t uid = uid_t(-1);
  gid_t gid = gid_t(-1);
};

/// What `ablation-compile --probe-sandbox` said: whether this host can confine a compile.
struct SandboxProbe {
  bool ok = false;
  std::string description;  ///< ok: what the sandbox has ("mount-namespace landlock=7 ...")
  std::string why;          ///< not ok: a sentence saying what the host could not set up
};
SandboxProbe ProbeCompilerSandbox(const std::string& compiler_path, const CompileSandbox& sandbox);

/// The compiler's version as its builds record it ("nvrtc 13.0"), from `compiler_path
/// --version`; "" where it cannot say (not there, killed, another program).
std::string CompilerVersionOf(const std::string& compiler_path);

/// Compiles `request` with the compiler at `compiler_path`. Not ok, with `log` saying why, when
/// the source does not compile (the compiler's log, its line numbers intact), its cubin is over
/// the limit, the child was killed at the deadline or by a limit, its sandbox could not be set
/// up (`sandbox_refused`), or it could not run at all.
struct ChildCompile {
  kernels::user::CompileResult result;
  bool sandbox_refused = false;
  std::string sandbox;  ///< what the child's sandbox had, as it said
};
ChildCompile CompileInChild(const std::string& compiler_path,
                            const kernels::user::CompileRequest& request,
                            const CompileLimits& limits, const CompileSandbox& sandbox);

}  // namespace ablation::core
