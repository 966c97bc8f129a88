// `kernel add FILE.cu --manifest FILE.toml | check FILE.cu --manifest FILE.toml [--arch sm_90a] |
// list | show NAME[@V] [--source] | diff NAME [V1 V2] | remove NAME[@V]`: the user kernels a
// daemon holds and their versions (kernels/user/README.md has the manifest's format).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "client/cli/options.h"

namespace ablation::client {

struct KernelOptions {
  std::string source_path;        // add, check
  std::string manifest_path;      // add, check
  std::string arch;               // check: compile for this architecture rather than GPU 0's
  std::string name;               // show, diff, remove
  bool with_source = false;       // show
  std::vector<int64_t> versions;  // diff: the two versions (none: the two newest)
};

struct KernelCommands {
  CLI::App* add = nullptr;
  CLI::App* check = nullptr;
  CLI::App* list = nullptr;
  CLI::App* show = nullptr;
  CLI::App* remove = nullptr;
  CLI::App* diff = nullptr;
};

CLI::App* SetupKernel(CLI::App& app, KernelOptions& options, KernelCommands* commands);
int ExecuteKernel(const KernelOptions& options, const KernelCommands& commands,
                  const CommandContext& context);

}  // namespace ablation::client
