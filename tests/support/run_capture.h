// A command line run for a test, its standard output read whole (the worker's --help, its
// one-shot profile process).
#pragma once

#include <cstdio>
#include <string>

namespace ablation::testing {

/// Runs `command` through sh (as popen does) and returns what it wrote on stdout; `status` gets
/// pclose's status, -1 where the command could not be started.
inline std::string RunCapture(const std::string& command, int* status) {
  FILE* f = ::popen(command.c_str(), "r");
  if (f == nullptr) {
    *status = -1;
    return "";
  }
  std::string out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  *status = ::pclose(f);
  return out;
}

}  // namespace ablation::testing
