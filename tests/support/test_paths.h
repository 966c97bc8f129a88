// Where tests find the programs they start. The build tree's paths are compiled in; a copy of
// the binaries elsewhere (a relocatable bundle on a GPU node) is named by ABLATION_TEST_BIN_DIR.
#pragma once

#include <cstdlib>
#include <string>

namespace ablation::testing {

inline std::string TestBinary(const std::string& compiled_path) {
  const char* dir = std::getenv("ABLATION_TEST_BIN_DIR");
  if (!dir || !*dir) return compiled_path;
  auto slash = compiled_path.rfind('/');
  return std::string(dir) + "/" +
         (slash == std::string::npos ? compiled_path : compiled_path.substr(slash + 1));
}

}  // namespace ablation::testing
