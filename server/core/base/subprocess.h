// Runs a tool the daemon needs (cuobjdump, ncu, the user kernels' compiler) as a child process
// without a shell: argv as given, stdin from /dev/null or given bytes, stdout and stderr read apart
// (each bounded where asked), a deadline after which the child's whole process group is killed
// (ncu starts the program it profiles as a child of its own, which must not outlive it holding
// the GPU); for a child that runs other people's input, an empty environment, a working folder,
// no inherited descriptors and death with the daemon.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace ablation::core {

/// How a child is started and what of it is kept. The defaults are a tool's: the daemon's
/// environment, its working folder, stdin from /dev/null, everything it writes kept.
struct ProcessOptions {
  std::string stdin_data;          ///< written to its stdin, which is then closed
  bool empty_environment = false;  ///< no variable at all (the daemon's may hold secrets)
  std::string working_dir;         ///< "" : the daemon's
  /// SIGKILL when the daemon ends (PR_SET_PDEATHSIG, checked after it is set). It is the calling
  /// thread's end that counts: call from a thread that outlives the child.
  bool die_with_parent = false;
  bool close_other_fds = false;  ///< no descriptor of the daemon's but 0, 1 and 2
  size_t max_out_bytes = 0;      ///< 0: no bound; past it the child is killed (out_overflow)
  size_t max_err_bytes = 0;      ///< 0: no bound; past it stderr is read and dropped
};

struct ProcessResult {
  bool started = false;       ///< false: fork or exec failed (error says why)
  bool timed_out = false;     ///< killed at the deadline
  bool out_overflow = false;  ///< killed for writing more than max_out_bytes
  int exit_code = -1;         ///< -1 when it ended by a signal
  int signal = 0;
  std::string out;
  std::string err;
  std::string error;  ///< why it could not run, or "did not finish in N s"

  bool ok() const { return started && !timed_out && exit_code == 0; }
  /// "exit 3", "signal 9", "did not finish in 120 s", or the error.
  std::string Ending() const;
};

/// Runs argv[0] (a path) with argv; waits at most `timeout`.
ProcessResult RunProcess(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                         const ProcessOptions& options = {});

}  // namespace ablation::core
