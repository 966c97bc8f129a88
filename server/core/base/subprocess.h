// Runs a tool the daemon needs (cuobjdump, ncu) as a child process without a shell: argv as given,
// stdin from /dev/null, stdout and stderr read apart, a deadline after which the child's whole
// process group is killed (ncu starts the program it profiles as a child of its own, which must
// not outlive it holding the GPU).
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace ablation::core {

struct ProcessResult {
  bool started = false;    ///< false: fork or exec failed (error says why)
  bool timed_out = false;  ///< killed at the deadline
  int exit_code = -1;      ///< -1 when it ended by a signal
  int signal = 0;
  std::string out;
  std::string err;
  std::string error;  ///< why it could not run, or "did not finish in N s"

  bool ok() const { return started && !timed_out && exit_code == 0; }
  /// "exit 3", "signal 9", "did not finish in 120 s", or the error.
  std::string Ending() const;
};

/// Runs argv[0] (a path) with argv; waits at most `timeout`.
ProcessResult RunProcess(const std::vector<std::string>& argv, std::chrono::seconds timeout);

}  // namespace ablation::core
