// Finding a CUDA command-line tool on the daemon's host (ncu, cuobjdump): one search for both, so
// that a configured path means the same to each and a missing tool is reported alike.
#pragma once

#include <string>
#include <vector>

namespace ablation::core {

/// Where to look for one tool.
struct CudaToolSearch {
  std::string name;        ///< the executable's name: "ncu", "cuobjdump"
  std::string env_var;     ///< the variable that names it when `configured` is empty
  std::string configured;  ///< the daemon's setting; empty: env_var, then the usual places
  /// Looked at after PATH, $CUDA_HOME/bin and /usr/local/cuda/bin, in this order (ncu's
  /// Nsight Compute installs), and how the message names them ("" when none).
  std::vector<std::string> more;
  std::string more_looked;
};

/// The first executable regular file among the candidates, or "" with *looked (where given) set
/// to where the search looked. Configured (s.configured, else $env_var): that tool or none, a wrong
/// path never falling back to another copy silently; a bare name is looked up on PATH alone.
/// Otherwise: PATH, $CUDA_HOME/bin, /usr/local/cuda/bin, then s.more.
std::string FindCudaTool(const CudaToolSearch& s, std::string* looked);

/// The entries of $PATH (empty ones skipped) joined with `name`.
std::vector<std::string> OnPath(const std::string& name);

}  // namespace ablation::core
