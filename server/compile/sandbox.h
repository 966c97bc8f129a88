// The confinement ablation-compile puts itself in before it reads a user's source, so that a
// compile (NVRTC: the preprocessor, the front end and ptxas, all in this process) can read nothing
// but the toolkit's headers, reach no network and touch no other process:
//
// - a mount namespace whose root is an empty read-only tmpfs holding only the allowed folders,
//   bound read-only at their own paths (so `#include "/etc/passwd"` and `__has_include` find
//   nothing: the path does not exist here), with a network, IPC and UTS namespace of its own;
//   made as root where the daemon is root, else in a user namespace of its own;
// - Landlock rules (where the kernel has Landlock): reading only the allowed folders, writing
//   nothing, no TCP, no signals or abstract sockets outside the sandbox;
// - an unprivileged user (where the daemon is root: `nobody` unless configured), no capabilities,
//   no_new_privs;
// - a system-call filter (libseccomp): no sockets, no exec, no fork (threads only), no ptrace,
//   namespaces, mounts, keyrings, BPF, perf or io_uring, no signal to another process;
// - the parent-death signal (SIGKILL), set after the last change of credentials (which clears
//   it) and checked against the daemon's pid afterwards.
//
// Either of the first two is a sandbox: with the mount namespace nothing outside the allowed
// folders exists; with Landlock alone what exists cannot be opened, and the compiler's error for
// a refused include is made the same as for a missing one (server/compile/nvrtc.h) so that it
// tells nothing. A host that offers neither cannot sandbox a compile: Apply says why.
//
// Landlock through its three system calls: Debian 12 has no liblandlock, and its kernel headers
// predate the network and scope rights, which are declared in sandbox.cc.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ablation::compile {

struct SandboxOptions {
  /// Folders the compile may read (the toolkit's headers), bound and allowed at these paths.
  std::vector<std::string> read_dirs;
  /// Where the daemon is root: the user and group the compile runs as (`nobody`); ignored
  /// otherwise. -1: leave as is.
  uid_t uid = uid_t(-1);
  gid_t gid = gid_t(-1);
  /// The daemon's pid: the compile ends when its parent is no longer this process.
  pid_t parent = 0;
  /// false: Landlock alone, as on a host whose namespaces are off (the tests of that case).
  bool namespaces = true;
};

struct SandboxReport {
  bool ok = false;               ///< a sandbox: a mount namespace or Landlock, and the filter
  std::string why;               ///< when not ok: what the host could not set up
  bool mount_namespace = false;  ///< only the allowed folders exist
  bool user_namespace = false;   ///< the mount namespace was made in a user namespace
  int landlock_abi = 0;          ///< 0: none
  bool seccomp = false;
  uid_t uid = 0;  ///< who the compile runs as
  /// One line: "mount-namespace landlock=7 seccomp uid=65534 no-network".
  std::string Describe() const;
};

/// Confines this process (single-threaded, before the user's source is read); the working
/// folder is the sandbox's empty root afterwards. Never half-applied without saying so: a step
/// that fails leaves `ok` false and `why` naming it, and the caller must not go on to compile.
SandboxReport ApplySandbox(const SandboxOptions& options);

/// The limits of the compile's own process (setrlimit): `data_mb` of private writable memory (what
/// a compile can actually use: NVRTC reserves address space it never touches, so the address
/// space is bounded more loosely, at `address_space_mb`), CPU seconds, no core dumps, a file
/// written (stdout, where it is one) no larger than `max_output_bytes`, few descriptors.
void ApplyLimits(int data_mb, int address_space_mb, int cpu_seconds, size_t max_output_bytes);

}  // namespace ablation::compile
