// Finding a CUDA command-line tool: see cuda_tool.h.
#include "server/core/inspect/cuda_tool.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace ablation::core {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string EnvOrEmpty(const std::string& name) {
  const char* v = name.empty() ? nullptr : std::getenv(name.c_str());
  return v ? v : "";
}

}  // namespace

std::vector<std::string> OnPath(const std::string& name) {
  std::vector<std::string> out;
  const std::string path = EnvOrEmpty("PATH");
  for (size_t b = 0; b <= path.size();) {
    size_t e = path.find(':', b);
    if (e == std::string::npos) e = path.size();
    if (e > b) out.push_back(path.substr(b, e - b) + "/" + name);
    b = e + 1;
  }
  return out;
}

std::string FindCudaTool(const CudaToolSearch& s, std::string* looked) {
  std::vector<std::string> candidates;
  const std::string chosen = s.configured.empty() ? EnvOrEmpty(s.env_var) : s.configured;
  if (!chosen.empty()) {
    candidates =
        chosen.find('/') == std::string::npos ? OnPath(chosen) : std::vector<std::string>{chosen};
  } else {
    candidates = OnPath(s.name);
    if (const std::string home = EnvOrEmpty("CUDA_HOME"); !home.empty())
      candidates.push_back(home + "/bin/" + s.name);
    candidates.push_back("/usr/local/cuda/bin/" + s.name);
    candidates.insert(candidates.end(), s.more.begin(), s.more.end());
  }
  for (const auto& c : candidates)
    if (IsExecutableFile(c)) return c;
  if (looked) {
    *looked = !chosen.empty() ? s.env_var + "=" + chosen
                              : "PATH, $CUDA_HOME/bin, /usr/local/cuda/bin" +
                                    (s.more_looked.empty() ? "" : ", " + s.more_looked);
  }
  return "";
}

}  // namespace ablation::core
